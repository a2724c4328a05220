/**
 * Client overhead against an infinitely fast engine (`inferbench sim --time-scale 0`, own process):
 * tokens/s ingested, client CPU µs per streamed token, event-loop delay; then client CPU per token against
 * a paced server (one packet per token, user and kernel CPU apart, incremental method): first through the built
 * CLI as users run it (`inferbench run`, _overhead-run.ts) beside the floor of any Node client, then the library's
 * inner loop (_overhead-paced.ts);
 * then the most concurrent streams held (target 10,000) and memory per open stream (sim at real model
 * time, so streams stay open).
 *
 *   npm run bench:overhead [-- --quick] [-- --hold=N] [-- --only=ingest,paced,run,hold] [-- --paced-n=N] [-- --paced-runs=R]
 *                        [-- --run-n=N] [-- --run-pairs=R] [-- --workers=1,2]
 * (`paced` = the `run` rows and the library rows; `run` = the `run` rows and the floor alone)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg as osLoadavg } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { getDialect } from '../src/dialects/index.js';
import { runBenchmark } from '../src/load/benchmark.js';
import { createHttpStageRunner } from '../src/load/http-runner.js';
import type { ProfileConfig } from '../src/load/profiles.js';
import type { RequestRecord } from '../src/metrics/record.js';
import type { Workload } from '../src/workload/types.js';
import { ensureFdLimit } from './_fd.js';
import { PACED_METHOD, pacedScenario, type PacedRow } from './_overhead-paced.js';
import { RUN_METHOD, assertFreshBuild, bareFloor, runCliPair, type BareRow, type RunCliRow } from './_overhead-run.js';
import { runqueueWaitMs } from './_sched.js';
import { startSimChild, type SimChild } from './_sim-child.js';
import { fmt, machine, stamp, table } from './_stats.js';
import { openSender } from './_sender.js';
import { flagValue, parseWorkerCounts } from './_workers-arg.js';

const MODEL = 'Qwen2-7B-Instruct';
const quick = process.argv.includes('--quick');
const holdArg = Number(process.argv.find((a) => a.startsWith('--hold='))?.slice(7) ?? NaN);
const HOLD = Number.isFinite(holdArg) ? holdArg : quick ? 2000 : 10_000;
const onlyArg = process.argv.find((a) => a.startsWith('--only='))?.slice(7);
const ONLY = new Set(onlyArg ? onlyArg.split(',') : ['ingest', 'paced', 'hold']);
// `paced` carries the `run` rows first: what users pay through the CLI, then the library's inner loop.
if (ONLY.has('paced')) ONLY.add('run');
/** Ingest runs once per load-worker count (`run --workers N`): the client's ceiling with 1 and 2 threads. */
const WORKERS = parseWorkerCounts(flagValue(process.argv, 'workers'), [1, 2]);
const intArg = (name: string): number | undefined => {
  const v = Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? NaN);
  return Number.isInteger(v) && v > 0 ? v : undefined;
};
/**
 * Requests completed at the first reading of the paced scenario (the second is at 3N). 2,000 requests are
 * about 10 s at 128 streams: by then V8 has compiled the per-request code too (at 640 it was still compiling
 * in the window, which added ~1 µs per token that a long run does not pay).
 */
const PACED_N = intArg('paced-n') ?? (quick ? 640 : 2000);
/** Runs of each paced scenario; the median is reported (a shared box's neighbours move single runs by ±20%). */
const PACED_RUNS = intArg('paced-runs') ?? (quick ? 1 : 3);
/** `inferbench run` rows: requests of the first run (the second sends 3N); the issue's side-by-side used 640. */
const RUN_N = intArg('run-n') ?? 640;
/** Pairs of `inferbench run` (N and 3N); the median pair is reported with the range. */
const RUN_PAIRS = intArg('run-pairs') ?? (quick ? 1 : 3);
/** Issue 13's goal for user-space CPU per paced token on one worker (issue 36: through `run`, end to end). */
const PACED_USER_TARGET_US = 4;

/** Most streams open at once: requests whose response headers had arrived and whose body had not ended. */
function maxOpenStreams(records: readonly RequestRecord[]): number {
  const ev: Array<[number, number]> = [];
  for (const r of records) if (r.headersAtMs !== undefined) ev.push([r.headersAtMs, 1], [r.endAtMs, -1]);
  ev.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let most = 0;
  for (const [, d] of ev) most = Math.max(most, (open += d));
  return most;
}

function workload(outputTokens: number): Workload {
  return {
    description: `short prompt, ${outputTokens} output tokens`,
    item: (i) => ({ prompt: `${i} tell me a story`, promptTokens: 6, promptTokenSource: 'client-tokenizer', outputTokens }),
  };
}

interface Measured {
  records: RequestRecord[];
  wallMs: number;
  cpuMicros: number;
  simCpuMicros: number;
  runqueueWaitMs: number;
  loopP99Ms: number;
  peakInFlight: number;
  /** Resident and heap+external growth from before the stage to the moment of most streams in flight. */
  rssAtPeak: number;
  heapAtPeak: number;
  rss0: number;
  heap0: number;
}

async function measure(sim: SimChild, cfg: ProfileConfig, connections: number, workers = 1): Promise<Measured> {
  const sender = await openSender(workers, sim.url, connections, { connectMs: 30_000 });
  const { target } = sender;
  const records: RequestRecord[] = [];
  let inFlight = 0;
  let peak = 0;
  const mem = (): [number, number] => {
    const m = process.memoryUsage();
    return [m.rss, m.heapUsed + m.external + m.arrayBuffers];
  };
  global.gc?.();
  const [rss0, heap0] = mem();
  let rssAtPeak = rss0;
  let heapAtPeak = heap0;
  const runner = createHttpStageRunner({
    target, dialect: getDialect('openai-completions'), model: MODEL, forceLength: true, stream: true, seed: 1,
    onDispatch: () => void inFlight++,
    onRecord: (r) => {
      inFlight--;
      records.push(r);
    },
  });
  // sample memory only when the in-flight count reaches a new high (cheap: at most once per 20 ms)
  let lastSample = 0;
  const sampler = setInterval(() => {
    if (inFlight >= peak && performance.now() - lastSample > 20) {
      peak = inFlight;
      [rssAtPeak, heapAtPeak] = mem();
      lastSample = performance.now();
    }
  }, 5);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const simCpu0 = (await sim.usage()).cpuMicros;
  const cpu0 = process.cpuUsage();
  const wait0 = runqueueWaitMs();
  const t0 = performance.now();
  await runBenchmark(cfg, runner);
  const wallMs = performance.now() - t0;
  const wait = runqueueWaitMs() - wait0;
  const cpu = process.cpuUsage(cpu0);
  const simCpu = (await sim.usage()).cpuMicros - simCpu0;
  loop.disable();
  clearInterval(sampler);
  await sender.close();
  return {
    records, wallMs, cpuMicros: cpu.user + cpu.system, simCpuMicros: simCpu, runqueueWaitMs: wait, loopP99Ms: Math.max(0, loop.percentile(99) / 1e6 - 1),
    peakInFlight: peak, rssAtPeak, heapAtPeak, rss0, heap0,
  };
}

interface IngestRow {
  /** Load worker threads (1 = the main thread sends, as `run` without --workers). process.cpuUsage() counts them all. */
  workers: number;
  streams: number;
  outputTokens: number;
  ok: number;
  failed: number;
  tokens: number;
  tokensPerS: number;
  cpuUsPerToken: number;
  clientCpuShare: number;
  simCpuShare: number;
  clientRunqueueShare: number;
  loopP99Ms: number;
}

async function ingest(sim: SimChild, streams: number, outputTokens: number, requests: number, workers = 1): Promise<IngestRow> {
  const cfg: ProfileConfig = { profile: 'concurrent', concurrencies: [streams], limits: { maxRequests: requests }, workload: workload(outputTokens) };
  const m = await measure(sim, cfg, streams, workers);
  const ok = m.records.filter((r) => r.status === 'ok');
  const tokens = ok.reduce((s, r) => s + r.outputTokens, 0);
  return {
    workers,
    streams, outputTokens, ok: ok.length, failed: m.records.length - ok.length, tokens, tokensPerS: tokens / (m.wallMs / 1000),
    cpuUsPerToken: m.cpuMicros / tokens, clientCpuShare: m.cpuMicros / 1000 / m.wallMs, simCpuShare: m.simCpuMicros / 1000 / m.wallMs, clientRunqueueShare: m.runqueueWaitMs / m.wallMs, loopP99Ms: m.loopP99Ms,
  };
}

async function ingestSection(out: Record<string, unknown>): Promise<void> {
  const fast = await startSimChild(['--model', MODEL, '--time-scale', '0', '--max-num-seqs', '4096']);
  const rows: IngestRow[] = [];
  try {
    const plan: Array<[number, number, number]> = quick
      ? [[1, 256, 40], [100, 256, 400], [2000, 32, 4000]]
      : [[1, 1024, 60], [100, 256, 2000], [1000, 64, 6000], [2000, 32, 10000]];
    for (const workers of WORKERS) {
      await ingest(fast, 100, 64, 300, workers); // warm-up of this worker count, excluded
      for (const [streams, tokens, requests] of plan) {
        rows.push(await ingest(fast, streams, tokens, requests, workers));
        process.stderr.write(`ingest: done ${streams} streams, ${workers} worker(s)\n`);
      }
    }
  } finally {
    await fast.close();
  }
  out['ingest'] = rows;
  console.log('\ningest against an infinitely fast engine (sim --time-scale 0, its own process); both processes share the cores');
  console.log(table(
    ['workers', 'streams', 'tokens/req', 'ok/failed', 'tokens', 'tokens/s', 'client CPU µs/token', 'client CPU', 'client CPU wait', 'sim CPU', 'loop p99 ms'],
    rows.map((r) => [String(r.workers), String(r.streams), String(r.outputTokens), `${r.ok}/${r.failed}`, String(r.tokens), fmt(r.tokensPerS, 0), fmt(r.cpuUsPerToken, 2),
      `${(r.clientCpuShare * 100).toFixed(0)}%`, `${(r.clientRunqueueShare * 100).toFixed(0)}%`, `${(r.simCpuShare * 100).toFixed(0)}%`, fmt(r.loopP99Ms, 2)]),
  ));
  for (const workers of WORKERS) {
    const mine = rows.filter((r) => r.workers === workers);
    const best = mine.reduce((a, b) => (b.tokensPerS > a.tokensPerS ? b : a));
    const cheapest = Math.min(...mine.map((r) => r.cpuUsPerToken));
    console.log(`${workers} worker(s): most tokens/s ingested ${fmt(best.tokensPerS, 0)} (${best.streams} streams; client CPU ${(best.clientCpuShare * 100).toFixed(0)}%, sim CPU ${(best.simCpuShare * 100).toFixed(0)}%); client ceiling at ${fmt(cheapest, 2)} µs/token ≈ ${fmt(1e6 / cheapest, 0)} tokens/s per core`);
  }
  if (WORKERS.length > 1) {
    console.log(`workers: the simulator shares this machine's ${machine().cpus} cores with the client, so more workers only move the client's reads onto another event loop; tokens/s is bounded by the cores both processes share. On a machine with cores to spare the ceiling grows with the workers up to the simulator's own limit.`);
  }
}

/** The median run of a scenario (by user CPU per token), with the spread of all runs. */
interface PacedResult {
  label: string;
  median: PacedRow;
  userRange: [number, number];
  runs: PacedRow[];
}

/**
 * The paced server (20 ms to the first token, then one token every 10 ms, one packet each) through the h1
 * client and through undici, and the same replies sent whole (all tokens at once).
 */
async function pacedSection(out: Record<string, unknown>): Promise<void> {
  // undici is the reference for what the h1 client saves: one run is enough to show it.
  const scenarios: Array<[string, { burst: boolean; client: 'h1' | 'undici' }, number]> = [
    ['paced, h1 client', { burst: false, client: 'h1' }, PACED_RUNS],
    ['paced, undici client', { burst: false, client: 'undici' }, 1],
    ['all tokens at once, h1', { burst: true, client: 'h1' }, PACED_RUNS],
  ];
  const results: PacedResult[] = [];
  for (const [label, s, count] of scenarios) {
    const runs: PacedRow[] = [];
    for (let i = 0; i < count; i++) runs.push(await pacedScenario({ ...s, streams: 128, outputTokens: 64, n: PACED_N, ttftMs: 20, itlMs: 10 }));
    const sorted = [...runs].sort((a, b) => a.userUsPerToken - b.userUsPerToken);
    results.push({ label, median: sorted[(sorted.length - 1) >> 1] as PacedRow, userRange: [sorted[0]?.userUsPerToken ?? NaN, sorted.at(-1)?.userUsPerToken ?? NaN], runs });
    process.stderr.write(`paced: done ${label}\n`);
  }
  out['paced'] = { method: PACED_METHOD, runsPerScenario: PACED_RUNS, results };
  console.log(`\nclient CPU per token against a paced server in its own process (one worker; 128 streams, 64 tokens each; median run)`);
  console.log(table(
    ['scenario', 'runs', 'N', 'tokens (N→3N)', 'failed', 'tokens/s', 'user µs/token', 'user range', 'kernel µs/token', 'total µs/token', 'client CPU wait', 'server µs/token'],
    results.map(({ label, median: r, userRange, runs }) => [label, String(runs.length), String(r.n), String(r.tokens), String(r.failed), fmt(r.tokensPerS, 0), fmt(r.userUsPerToken, 2),
      `${fmt(userRange[0], 2)}–${fmt(userRange[1], 2)}`, fmt(r.kernelUsPerToken, 2), fmt(r.totalUsPerToken, 2), `${(r.clientRunqueueShare * 100).toFixed(0)}%`, fmt(r.serverUsPerToken, 2)]),
  ));
  const [paced, , burst] = results.map((r) => r.median);
  if (paced && burst) {
    const verdict = paced.userUsPerToken <= PACED_USER_TARGET_US ? 'within' : 'over';
    console.log(`paced user-space CPU per token: ${fmt(paced.userUsPerToken, 2)} µs, kernel ${fmt(paced.kernelUsPerToken, 2)} µs, total ${fmt(paced.totalUsPerToken, 2)} µs (${verdict} the ${PACED_USER_TARGET_US} µs user target)`);
    console.log(`unpaced user-space CPU per token: ${fmt(burst.userUsPerToken, 2)} µs, kernel ${fmt(burst.kernelUsPerToken, 2)} µs, total ${fmt(burst.totalUsPerToken, 2)} µs`);
  }
  console.log(`method: ${PACED_METHOD}`);
}

/**
 * `inferbench run` against the paced server as users run it (the issue's conditions: 128 streams, 16-token
 * prompts, 64-token outputs), R pairs of N and 3N requests; then the floor of any Node client on the same server.
 */
async function runSection(out: Record<string, unknown>): Promise<void> {
  try {
    assertFreshBuild();
  } catch (err) {
    console.error(`error: ${(err as Error).message}`);
    process.exit(2);
  }
  const o = { n: RUN_N, streams: 128, promptTokens: 16, outputTokens: 64, ttftMs: 20, itlMs: 10 };
  const load0 = osLoadavg()[0] ?? NaN;
  const pairs: RunCliRow[] = [];
  for (let i = 0; i < RUN_PAIRS; i++) {
    pairs.push(await runCliPair(o));
    process.stderr.write(`run: pair ${i + 1}/${RUN_PAIRS} done\n`);
  }
  const floor: BareRow = await bareFloor({ ...o, n: Math.max(RUN_N, 640) });
  const load1 = osLoadavg()[0] ?? NaN;
  const sorted = [...pairs].sort((a, b) => a.userUsPerToken - b.userUsPerToken);
  const median = sorted[(sorted.length - 1) >> 1] as RunCliRow;
  const range = (k: 'userUsPerToken' | 'kernelUsPerToken'): string => {
    const v = pairs.map((p) => p[k]).sort((a, b) => a - b);
    return `${fmt(v[0] ?? NaN, 2)}–${fmt(v.at(-1) ?? NaN, 2)}`;
  };
  out['run'] = { method: RUN_METHOD, pairs, median, floor, loadavg: [load0, load1] };
  console.log(`\nclient CPU per token of \`inferbench run\` against a paced server in its own process (20 ms to the first token, one token per packet every 10 ms; 128 streams, 16-token prompts, 64-token outputs; records, progress and /metrics sampling on)`);
  console.log(table(
    ['client', 'runs', 'N', 'tokens (N→3N)', 'tokens/s', 'user µs/token', 'user range', 'kernel µs/token', 'kernel range', 'total µs/token', 'wake-ups/token', 'server µs/token'],
    [
      ['inferbench run (CLI)', `${pairs.length} pairs`, String(median.n), String(median.tokens), fmt(median.tokensPerS, 0), fmt(median.userUsPerToken, 2), range('userUsPerToken'),
        fmt(median.kernelUsPerToken, 2), range('kernelUsPerToken'), fmt(median.totalUsPerToken, 2), fmt(median.wakeupsPerToken, 2), fmt(median.serverUsPerToken, 2)],
      ['floor: Node reads only', '1', String(Math.max(RUN_N, 640)), String(floor.tokens), fmt(floor.tokens / floor.wallS, 0), fmt(floor.userUsPerToken, 2), '', fmt(floor.kernelUsPerToken, 2), '',
        fmt(floor.totalUsPerToken, 2), fmt(floor.wakeupsPerToken, 2), ''],
    ],
  ));
  const verdict = median.userUsPerToken <= PACED_USER_TARGET_US ? 'within' : 'over';
  console.log(`run: ${fmt(median.userUsPerToken, 2)} µs user + ${fmt(median.kernelUsPerToken, 2)} µs kernel per paced token (${verdict} the ${PACED_USER_TARGET_US} µs user target); the floor (a Node process that only reads the sockets) ${fmt(floor.userUsPerToken, 2)} + ${fmt(floor.kernelUsPerToken, 2)}`);
  // What inferbench adds over any Node client on this box, and the ratio: a shared box moves both, the ratio less.
  const userOver = median.userUsPerToken - floor.userUsPerToken;
  console.log(`run against the floor: user ${fmt(median.userUsPerToken / floor.userUsPerToken, 2)}× (${fmt(userOver, 2)} µs per token of inferbench's own), total ${fmt(median.totalUsPerToken / floor.totalUsPerToken, 2)}×${floor.userUsPerToken > PACED_USER_TARGET_US ? `; the floor's user CPU alone is over the ${PACED_USER_TARGET_US} µs target on this machine` : ''}`);
  console.log(`load average (1 min) before and after: ${load0.toFixed(2)}, ${load1.toFixed(2)} on ${machine().cpus} CPUs; wake-ups/token below 1 mean several tokens per wake-up (a busy box batches them, which lowers the CPU per token)`);
  console.log(`method: ${RUN_METHOD}`);
}

async function holdSection(out: Record<string, unknown>): Promise<void> {
  // Holding streams open: the real model time at a huge batch keeps every stream open for seconds.
  const need = HOLD + 512;
  let hold: Record<string, unknown>;
  try {
    ensureFdLimit(process.pid, need, 'the client (this process)');
    const slow = await startSimChild(['--model', MODEL, '--max-num-seqs', String(HOLD)]);
    try {
      ensureFdLimit(slow.pid, need, 'the sim process');
      const cfg: ProfileConfig = { profile: 'throughput', limits: { maxRequests: HOLD }, maxConcurrency: HOLD, workload: workload(16) };
      const m = await measure(slow, cfg, HOLD);
      const ok = m.records.filter((r) => r.status === 'ok').length;
      const errs: Record<string, number> = {};
      for (const r of m.records) if (r.error) errs[r.error.code] = (errs[r.error.code] ?? 0) + 1;
      hold = {
        target: HOLD, peakInFlight: m.peakInFlight, peakOpenStreams: maxOpenStreams(m.records), ok, failed: m.records.length - ok, errors: errs, wallS: m.wallMs / 1000, loopP99Ms: m.loopP99Ms,
        rssPerStreamKiB: (m.rssAtPeak - m.rss0) / Math.max(1, m.peakInFlight) / 1024, heapPerStreamKiB: (m.heapAtPeak - m.heap0) / Math.max(1, m.peakInFlight) / 1024,
      };
    } finally {
      await slow.close();
    }
  } catch (err) {
    hold = { target: HOLD, failed: true, reason: (err as Error).message };
  }
  out['hold'] = hold;
  console.log('\nconcurrent streams held (burst of N requests, each streaming 16 tokens at real model time; open = headers received, body not ended)');
  if (hold['reason']) console.log(`FAILED: ${String(hold['reason'])}`);
  else {
    const h = hold as { target: number; peakInFlight: number; peakOpenStreams: number; ok: number; failed: number; wallS: number; loopP99Ms: number; rssPerStreamKiB: number; heapPerStreamKiB: number; errors: Record<string, number> };
    console.log(table(
      ['target', 'peak in flight', 'peak open streams', 'ok/failed', 'wall s', 'loop p99 ms', 'RSS KiB/stream', 'heap+ext KiB/stream'],
      [[String(h.target), String(h.peakInFlight), String(h.peakOpenStreams), `${h.ok}/${h.failed}`, fmt(h.wallS, 1), fmt(h.loopP99Ms, 2), fmt(h.rssPerStreamKiB, 1), fmt(h.heapPerStreamKiB, 1)]],
    ));
    if (h.failed > 0) console.log(`errors: ${JSON.stringify(h.errors)}`);
  }
}

async function main(): Promise<void> {
  const out: Record<string, unknown> = { machine: machine() };
  if (ONLY.has('ingest')) await ingestSection(out);
  if (ONLY.has('run')) await runSection(out);
  if (ONLY.has('paced')) await pacedSection(out);
  if (ONLY.has('hold')) await holdSection(out);
  mkdirSync('bench/out', { recursive: true });
  const file = `bench/out/overhead-${stamp()}.json`;
  writeFileSync(file, JSON.stringify(out, null, 2));
  console.log(`\nfull data: ${file}`);
}

await main();
