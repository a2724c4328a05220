/**
 * The gate's false-alarm rate and power, measured (issue 32 item 5; the figures are in docs/gate.md).
 *
 * Against `inferbench sim` in its own process (a fresh one per run, as CI starts a server), over HTTP, one run after
 * another: baseline runs B0…Bn at --model-time-scale 1 and, between them, slow runs S0…S(n−1) at --slow (default 1.1,
 * every model step 10% slower). A/A pairs: (Bi, Bi+1), runs about half a minute apart; slow pairs: (Bi, Si). Each
 * pair is gated at the default thresholds (gate/thresholds.ts DEFAULT_MAX_REGRESSION) exactly as `inferbench gate`
 * does; printed: false fails among the A/A pairs, and detections (fail) among the slow pairs, with what decided.
 *
 * Run (after `npm run build`): npx tsx bench/gate-power.ts [--pairs=20] [--requests=300[,600]] [--slow=1.1]
 *   [--concurrency=8] [--prompt=128] [--output=32]. Loopback only; bounded by the request counts (one run of 300
 * requests takes ~15 s here). Full results: bench/out/gate-power.json.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gateRuns, thresholdsOrThrow, type GateReport } from '../src/gate/index.js';
import { openRunDir } from '../src/store/run-store.js';

const arg = (name: string, fallback: string): string => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const pairs = Number(arg('pairs', '20'));
const lengths = arg('requests', '300').split(',').map(Number);
const slow = arg('slow', '1.1');
const load = ['--profile', 'concurrent', '--concurrency', arg('concurrency', '8'), '--prompt-tokens', arg('prompt', '128'), '--output-tokens', arg('output', '32')];
const cli = join(import.meta.dirname, '..', 'bin', 'inferbench.js');
const tmp = mkdtempSync(join(tmpdir(), 'ib-gate-power-'));

function exec(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

/** One run against a fresh `inferbench sim` process. */
async function runOnce(scale: string, requests: number, out: string): Promise<void> {
  const sim = spawn(process.execPath, [cli, 'sim', '--port', '0', '--model-time-scale', scale], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let text = '';
      sim.stdout.on('data', (d: Buffer) => {
        text += d.toString();
        const m = /http:\/\/127\.0\.0\.1:\d+/.exec(text);
        if (m) resolve(m[0]);
      });
      sim.on('close', () => reject(new Error(`sim exited: ${text}`)));
    });
    const r = await exec(['run', '--target', url, ...load, '--max-requests', String(requests), '--no-progress', '--format', 'json', '--out', out]);
    if (r.code !== 0) throw new Error(`run failed (${r.code}): ${r.out.slice(-400)}`);
  } finally {
    sim.kill('SIGTERM');
  }
}

const thresholds = thresholdsOrThrow(undefined);
const gate = (a: string, b: string): Promise<GateReport> => gateRuns([openRunDir(a)], [openRunDir(b)], { thresholds });
const why = (r: GateReport, v: string): string => r.checks.filter((c) => c.verdict === v).map((c) => `${c.metric} ${(c.change * 100).toFixed(1)}%`).join(' ');

const results: unknown[] = [];
console.log(`gate power: ${pairs} A/A and ${pairs} slow (×${slow}) pairs per run length; ${cpus().length} CPUs, load average ${loadavg()[0]?.toFixed(2)} at start`);
for (const requests of lengths) {
  const t0 = performance.now();
  const base: string[] = [];
  const slowRuns: string[] = [];
  for (let i = 0; i <= pairs; i++) {
    base.push(join(tmp, `n${requests}-b${i}`));
    await runOnce('1', requests, base[i] as string);
    if (i < pairs) {
      slowRuns.push(join(tmp, `n${requests}-s${i}`));
      await runOnce(slow, requests, slowRuns[i] as string);
    }
  }
  const tally = { aa: { pass: 0, fail: 0, inconclusive: 0 }, slow: { pass: 0, fail: 0, inconclusive: 0 } };
  for (let i = 0; i < pairs; i++) {
    const aa = await gate(base[i] as string, base[i + 1] as string);
    const s = await gate(base[i] as string, slowRuns[i] as string);
    tally.aa[aa.verdict]++;
    tally.slow[s.verdict]++;
    console.log(`  n=${requests} pair ${String(i + 1).padStart(2)}: A/A ${aa.verdict.padEnd(12)} ${why(aa, 'fail') || why(aa, 'inconclusive')}  | slow ${s.verdict.padEnd(12)} ${why(s, 'fail') || why(s, 'inconclusive')}`);
    results.push({ requests, pair: i, aa: { verdict: aa.verdict, checks: aa.checks }, slow: { verdict: s.verdict, checks: s.checks } });
  }
  const minutes = (performance.now() - t0) / 60000;
  console.log(
    `n=${requests} requests per run: A/A false fails ${tally.aa.fail}/${pairs} (inconclusive ${tally.aa.inconclusive}, pass ${tally.aa.pass}); ` +
      `×${slow} detected ${tally.slow.fail}/${pairs} (inconclusive ${tally.slow.inconclusive}, pass ${tally.slow.pass}); ${minutes.toFixed(1)} min; load average ${loadavg()[0]?.toFixed(2)}`,
  );
}
mkdirSync(join(import.meta.dirname, 'out'), { recursive: true });
writeFileSync(join(import.meta.dirname, 'out', 'gate-power.json'), JSON.stringify(results, null, 1));
rmSync(tmp, { recursive: true, force: true });
