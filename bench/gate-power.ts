/**
 * The gate's false-alarm rate and power, measured (issue 32 item 5; the figures are in docs/gate.md).
 *
 * Against `inferbench sim` in its own process (a fresh one per run, as CI starts a server), over HTTP, one run after
 * another: baseline runs B0, B1, … at --model-time-scale 1 and, between them, slow runs S0, S1, … at --slow (default
 * 1.1: every model step 10% slower). Each pair is gated at the default thresholds (gate/thresholds.ts
 * DEFAULT_MAX_REGRESSION) exactly as `inferbench gate` does, with K runs a side for each K of --sides:
 *   A/A pair i:  Bi … Bi+K−1  against  Bi+K … Bi+2K−1  (the same server, runs about half a minute apart)
 *   slow pair i: Bi … Bi+K−1  against  Si … Si+K−1
 * For K > 1 consecutive pairs share runs (a sliding window): they are not independent trials.
 * Printed per K: false fails among the A/A pairs, detections (fail) among the slow pairs, and what decided.
 *
 * Run (after `npm run build`): npx tsx bench/gate-power.ts [--pairs=20] [--sides=1,3] [--requests=300] [--slow=1.1]
 *   [--concurrency=8] [--prompt=128] [--output=32] [--dir=DIR]. Loopback only; bounded by the request counts (one run
 * of 300 requests took ~20 s on the shared 2-core machine). Runs are kept in --dir (default bench/out/gate-power-runs;
 * runs already there are reused, so an interrupted bench continues); verdicts go to bench/out/gate-power.json.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { gateRuns, thresholdsOrThrow, type GateReport } from '../src/gate/index.js';
import { openRunDir } from '../src/store/run-store.js';

const arg = (name: string, fallback: string): string => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const pairs = Number(arg('pairs', '20'));
const requests = Number(arg('requests', '300'));
const sides = arg('sides', '1,3').split(',').map(Number);
const maxK = Math.max(...sides);
const slow = arg('slow', '1.1');
const load = ['--profile', 'concurrent', '--concurrency', arg('concurrency', '8'), '--prompt-tokens', arg('prompt', '128'), '--output-tokens', arg('output', '32')];
const cli = join(import.meta.dirname, '..', 'bin', 'inferbench.js');
const dir = arg('dir', join(import.meta.dirname, 'out', 'gate-power-runs'));
mkdirSync(dir, { recursive: true });

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
const why = (r: GateReport, v: string): string => r.checks.filter((c) => c.verdict === v).map((c) => `${c.metric} ${(c.change * 100).toFixed(1)}%`).join(' ');

/** A finished run folder (summary.json written with complete: true). */
function finished(path: string): boolean {
  if (!existsSync(join(path, 'summary.json'))) return false;
  return (JSON.parse(readFileSync(join(path, 'summary.json'), 'utf8')) as { complete?: boolean }).complete !== false;
}

const results: unknown[] = [];
const baseCount = pairs + 2 * maxK - 1;
const slowCount = pairs + maxK - 1;
console.log(`gate power: ${pairs} A/A and ${pairs} slow (×${slow}) pairs, ${sides.join(' and ')} run(s) a side, ${requests} requests a run; ${cpus().length} CPUs, load average ${loadavg()[0]?.toFixed(2)} at start`);
const t0 = performance.now();
const base: string[] = [];
const slowRuns: string[] = [];
for (let i = 0; i < baseCount; i++) {
  base.push(join(dir, `n${requests}-b${i}`));
  if (!finished(base[i] as string)) {
    rmSync(base[i] as string, { recursive: true, force: true });
    await runOnce('1', requests, base[i] as string);
  }
  if (i < slowCount) {
    slowRuns.push(join(dir, `n${requests}-s${i}`));
    if (!finished(slowRuns[i] as string)) {
      rmSync(slowRuns[i] as string, { recursive: true, force: true });
      await runOnce(slow, requests, slowRuns[i] as string);
    }
  }
}
console.log(`runs: ${baseCount} baseline, ${slowCount} slow, ${((performance.now() - t0) / 60000).toFixed(1)} min (runs already in ${dir} reused); load average ${loadavg()[0]?.toFixed(2)}`);
const open = (paths: readonly string[]) => paths.map((p) => openRunDir(p));
for (const k of sides) {
  const tally = { aa: { pass: 0, fail: 0, inconclusive: 0 }, slow: { pass: 0, fail: 0, inconclusive: 0 } };
  for (let i = 0; i < pairs; i++) {
    const a = base.slice(i, i + k);
    const aa = await gateRuns(open(a), open(base.slice(i + k, i + 2 * k)), { thresholds });
    const s = await gateRuns(open(a), open(slowRuns.slice(i, i + k)), { thresholds });
    tally.aa[aa.verdict]++;
    tally.slow[s.verdict]++;
    console.log(`  K=${k} pair ${String(i + 1).padStart(2)}: A/A ${aa.verdict.padEnd(12)} ${why(aa, 'fail') || why(aa, 'inconclusive')}  | slow ${s.verdict.padEnd(12)} ${why(s, 'fail') || why(s, 'inconclusive')}`);
    results.push({ k, requests, pair: i, aa: { verdict: aa.verdict, checks: aa.checks }, slow: { verdict: s.verdict, checks: s.checks } });
  }
  console.log(
    `K=${k} run(s) a side, ${requests} requests a run: A/A false fails ${tally.aa.fail}/${pairs} (inconclusive ${tally.aa.inconclusive}, pass ${tally.aa.pass}); ` +
      `×${slow} detected ${tally.slow.fail}/${pairs} (inconclusive ${tally.slow.inconclusive}, pass ${tally.slow.pass})`,
  );
}
mkdirSync(join(import.meta.dirname, 'out'), { recursive: true });
writeFileSync(join(import.meta.dirname, 'out', 'gate-power.json'), JSON.stringify(results, null, 1));
