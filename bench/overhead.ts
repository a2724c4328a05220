/**
 * Client overhead against an infinitely fast engine (`inferbench sim --time-scale 0`, own process):
 * tokens/s ingested, client CPU µs per streamed token, event-loop delay; then the most concurrent
 * streams held (target 10,000) and memory per open stream (sim at real model time, so streams stay open).
 *
 *   npm run bench:overhead [-- --quick] [-- --hold=N]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { getDialect } from '../src/dialects/index.js';
import { runBenchmark } from '../src/load/benchmark.js';
import { createHttpStageRunner } from '../src/load/http-runner.js';
import type { ProfileConfig } from '../src/load/profiles.js';
import type { RequestRecord } from '../src/metrics/record.js';
import { HttpTarget } from '../src/transport/http.js';
import type { Workload } from '../src/workload/types.js';
import { ensureFdLimit } from './_fd.js';
import { runqueueWaitMs } from './_sched.js';
import { startSimChild, type SimChild } from './_sim-child.js';
import { fmt, machine, stamp, table } from './_stats.js';

const MODEL = 'Qwen2-7B-Instruct';
const quick = process.argv.includes('--quick');
const holdArg = Number(process.argv.find((a) => a.startsWith('--hold='))?.slice(7) ?? NaN);
const HOLD = Number.isFinite(holdArg) ? holdArg : quick ? 2000 : 10_000;

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

async function measure(sim: SimChild, cfg: ProfileConfig, connections: number): Promise<Measured> {
  const target = new HttpTarget({ baseUrl: sim.url, connections, timeouts: { connectMs: 30_000 } });
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
  await target.close();
  return {
    records, wallMs, cpuMicros: cpu.user + cpu.system, simCpuMicros: simCpu, runqueueWaitMs: wait, loopP99Ms: Math.max(0, loop.percentile(99) / 1e6 - 1),
    peakInFlight: peak, rssAtPeak, heapAtPeak, rss0, heap0,
  };
}

interface IngestRow {
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

async function ingest(sim: SimChild, streams: number, outputTokens: number, requests: number): Promise<IngestRow> {
  const cfg: ProfileConfig = { profile: 'concurrent', concurrencies: [streams], limits: { maxRequests: requests }, workload: workload(outputTokens) };
  const m = await measure(sim, cfg, streams);
  const ok = m.records.filter((r) => r.status === 'ok');
  const tokens = ok.reduce((s, r) => s + r.outputTokens, 0);
  return {
    streams, outputTokens, ok: ok.length, failed: m.records.length - ok.length, tokens, tokensPerS: tokens / (m.wallMs / 1000),
    cpuUsPerToken: m.cpuMicros / tokens, clientCpuShare: m.cpuMicros / 1000 / m.wallMs, simCpuShare: m.simCpuMicros / 1000 / m.wallMs, clientRunqueueShare: m.runqueueWaitMs / m.wallMs, loopP99Ms: m.loopP99Ms,
  };
}

async function main(): Promise<void> {
  const out: Record<string, unknown> = { machine: machine() };
  const fast = await startSimChild(['--model', MODEL, '--time-scale', '0', '--max-num-seqs', '4096']);
  const rows: IngestRow[] = [];
  try {
    await ingest(fast, 100, 64, 300); // warm-up, excluded
    const plan: Array<[number, number, number]> = quick
      ? [[1, 256, 40], [100, 256, 400], [2000, 32, 4000]]
      : [[1, 1024, 60], [100, 256, 2000], [1000, 64, 6000], [2000, 32, 10000]];
    for (const [streams, tokens, requests] of plan) {
      rows.push(await ingest(fast, streams, tokens, requests));
      process.stderr.write(`ingest: done ${streams} streams\n`);
    }
  } finally {
    await fast.close();
  }
  out['ingest'] = rows;
  console.log('\ningest against an infinitely fast engine (sim --time-scale 0); both processes share the 2 cores');
  console.log(table(
    ['streams', 'tokens/req', 'ok/failed', 'tokens', 'tokens/s', 'client CPU µs/token', 'client CPU', 'client CPU wait', 'sim CPU', 'loop p99 ms'],
    rows.map((r) => [String(r.streams), String(r.outputTokens), `${r.ok}/${r.failed}`, String(r.tokens), fmt(r.tokensPerS, 0), fmt(r.cpuUsPerToken, 2),
      `${(r.clientCpuShare * 100).toFixed(0)}%`, `${(r.clientRunqueueShare * 100).toFixed(0)}%`, `${(r.simCpuShare * 100).toFixed(0)}%`, fmt(r.loopP99Ms, 2)]),
  ));
  const best = rows.reduce((a, b) => (b.tokensPerS > a.tokensPerS ? b : a));
  const cheapest = Math.min(...rows.map((r) => r.cpuUsPerToken));
  console.log(`most tokens/s ingested: ${fmt(best.tokensPerS, 0)} (${best.streams} streams; sim CPU ${(best.simCpuShare * 100).toFixed(0)}%); client ceiling at ${fmt(cheapest, 2)} µs/token ≈ ${fmt(1e6 / cheapest, 0)} tokens/s per core`);

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
  mkdirSync('bench/out', { recursive: true });
  const file = `bench/out/overhead-${stamp()}.json`;
  writeFileSync(file, JSON.stringify(out, null, 2));
  console.log(`\nfull data: ${file}`);
}

await main();
