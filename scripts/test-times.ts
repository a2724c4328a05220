/**
 * `npm run test:times [-- --top N] [-- VITEST ARGS]`: runs the suite (or the files named) and prints where its time
 * goes: the slowest test files by CPU and by wall time, the slowest tests, and the suite's total wall and CPU time.
 *
 * Per-file CPU is the worker process's own CPU plus that of the child processes it started (servers, CLIs), read
 * from /proc by test/helpers/test-times.ts; so the suite runs with `--pool forks` here (each worker a process; the
 * same number of workers as `npm test`). The suite's total CPU is this script's reaped children (vitest and
 * everything under it), from /proc/self/stat — what `time npm test` would report as user + sys.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

interface FileTime { file: string; wallMs: number; cpuSelfMs: number | null; cpuChildrenMs: number | null }
interface JsonReport {
  numPassedTests: number;
  numFailedTests: number;
  testResults: { name: string; assertionResults: { fullName: string; duration?: number | null; status: string }[] }[];
}

function childrenCpuMs(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[16 - 3]) + Number(f[17 - 3])) * 10;
  } catch {
    return null;
  }
}

const args = process.argv.slice(2);
let top = 10;
const topAt = args.indexOf('--top');
if (topAt >= 0) {
  top = Number(args[topAt + 1]);
  if (!Number.isInteger(top) || top < 1) {
    console.error('error: --top takes a whole number ≥ 1, e.g. --top 10');
    process.exit(2);
  }
  args.splice(topAt, 2);
}

const dir = mkdtempSync(join(tmpdir(), 'inferbench-test-times-'));
const timesFile = join(dir, 'files.jsonl');
const reportFile = join(dir, 'report.json');
const root = process.cwd();
const started = performance.now();
const child = spawn('bash', ['scripts/test.sh', '--pool', 'forks', '--reporter=dot', '--reporter=json', `--outputFile.json=${reportFile}`, ...args], {
  stdio: ['ignore', 'inherit', 'inherit'],
  env: { ...process.env, INFERBENCH_TEST_TIMES: timesFile },
});
const code: number = await new Promise((resolve) => child.on('close', (c) => resolve(c ?? 1)));
const wallS = (performance.now() - started) / 1000;
const cpuMs = childrenCpuMs();

const files: FileTime[] = existsSync(timesFile)
  ? readFileSync(timesFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as FileTime)
  : [];
const report: JsonReport | null = existsSync(reportFile) ? (JSON.parse(readFileSync(reportFile, 'utf8')) as JsonReport) : null;
rmSync(dir, { recursive: true, force: true });

const s = (ms: number | null): string => (ms === null ? '—' : (ms / 1000).toFixed(1));
const cpuOf = (f: FileTime): number => (f.cpuSelfMs ?? 0) + (f.cpuChildrenMs ?? 0);
const name = (p: string): string => relative(root, p);

console.log(`\nslowest test files by CPU (own + child processes, seconds):`);
console.log('   CPU   own  child   wall  file');
for (const f of [...files].sort((a, b) => cpuOf(b) - cpuOf(a)).slice(0, top)) {
  console.log(`${s(cpuOf(f)).padStart(6)} ${s(f.cpuSelfMs).padStart(5)} ${s(f.cpuChildrenMs).padStart(6)} ${s(f.wallMs).padStart(6)}  ${name(f.file)}`);
}
console.log(`\nslowest test files by wall time (seconds):`);
for (const f of [...files].sort((a, b) => b.wallMs - a.wallMs).slice(0, top)) {
  console.log(`${s(f.wallMs).padStart(6)}  ${name(f.file)} (CPU ${s(cpuOf(f))})`);
}
if (report) {
  const tests = report.testResults.flatMap((r) => r.assertionResults.map((a) => ({ file: r.name, name: a.fullName, ms: a.duration ?? 0 })));
  console.log(`\nslowest tests (wall, seconds):`);
  for (const t of tests.sort((a, b) => b.ms - a.ms).slice(0, top)) console.log(`${s(t.ms).padStart(6)}  ${name(t.file)} › ${t.name}`);
  console.log(`\ntests: ${report.numPassedTests} passed, ${report.numFailedTests} failed, in ${files.length} files`);
}
const fileCpu = files.reduce((a, f) => a + cpuOf(f), 0);
console.log(
  `suite: ${wallS.toFixed(0)} s wall, ${cpuMs === null ? '—' : (cpuMs / 1000).toFixed(0)} CPU-seconds in all (vitest and every process under it; ` +
    `${(fileCpu / 1000).toFixed(0)} of them inside test files), exit ${code}`,
);
process.exit(code);
