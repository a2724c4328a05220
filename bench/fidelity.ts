/**
 * Measurement error of inferbench's client against the simulator's ground truth.
 * `inferbench sim` runs in its own process; the client is the library (HttpTarget, or a WorkerPool of load
 * threads as `run --workers N` uses, + createHttpStageRunner + runBenchmark). Each record is joined to the
 * sim's truth by x-sim-request-id.
 *
 *   npm run bench:fidelity [-- --quick] [-- --only=closed@2000,open@1000/s] [-- --workers=1,2] [-- --time-scale=X]
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { InferbenchError, isUserError } from '../src/core/errors.js';
import { getDialect } from '../src/dialects/index.js';
import { runBenchmark } from '../src/load/benchmark.js';
import { createHttpStageRunner } from '../src/load/http-runner.js';
import type { ProfileConfig } from '../src/load/profiles.js';
import { HealthMonitor } from '../src/metrics/health.js';
import type { RequestRecord } from '../src/metrics/record.js';
import type { TruthRecord } from '../src/sim/server/index.js';
import type { Workload } from '../src/workload/types.js';
import { printTables, type Row, type Scenario } from './_fidelity-print.js';
import { joinWithTruth } from './_join.js';
import { runqueueWaitMs } from './_sched.js';
import { openSender } from './_sender.js';
import { startSimChild, type SimChild } from './_sim-child.js';
import { dist, machine, stamp } from './_stats.js';
import { flagValue, parseWorkerCounts } from './_workers-arg.js';

const MODEL = 'Qwen2-7B-Instruct';
const quick = process.argv.includes('--quick');
const scale = quick ? 0.25 : 1;
const SCENARIOS: Scenario[] = ([
  { name: 'closed@10', kind: 'closed', level: 10, requests: 200, outputTokens: 64 },
  { name: 'closed@100', kind: 'closed', level: 100, requests: 1000, outputTokens: 64 },
  { name: 'closed@1000', kind: 'closed', level: 1000, requests: 3000, outputTokens: 32 },
  { name: 'closed@2000', kind: 'closed', level: 2000, requests: 4000, outputTokens: 32 },
  { name: 'open@100/s', kind: 'open', level: 100, requests: 500, outputTokens: 16 },
  { name: 'open@500/s', kind: 'open', level: 500, requests: 2500, outputTokens: 16 },
  { name: 'open@1000/s', kind: 'open', level: 1000, requests: 5000, outputTokens: 16 },
  { name: 'open@2000/s', kind: 'open', level: 2000, requests: 8000, outputTokens: 16 },
] as Scenario[]).map((s) => ({ ...s, requests: Math.max(s.level, Math.round(s.requests * scale)) }));
/** JIT and connection set-up paths, excluded: once for this thread, and again in every new pool's threads. */
const WARMUP: Scenario = { name: 'warmup', kind: 'closed', level: 100, requests: 300, outputTokens: 16 };

function workload(outputTokens: number): Workload {
  return {
    description: `short prompt, ${outputTokens} output tokens`,
    item: (i) => ({ prompt: `${i} tell me a story about the sea`, promptTokens: 9, promptTokenSource: 'client-tokenizer', outputTokens }),
  };
}

/** An open loop's only in-flight bound here is the connection pool: once it is full, sends wait for a free connection. */
const OPEN_LOOP_CONNECTIONS = 4096;

/**
 * A closed loop bounds what is in flight itself, so each thread may hold all of it (as `run --workers` does;
 * requests are dealt round robin, not evenly at each instant). An open loop past the server's capacity is bounded
 * only by the pools: they share one total, or N workers would offer the server N times the streams of one thread.
 */
function connectionsPerThread(sc: Scenario, workers: number): number {
  return sc.kind === 'closed' ? sc.level : Math.ceil(OPEN_LOOP_CONNECTIONS / workers);
}

function profile(sc: Scenario): ProfileConfig {
  return sc.kind === 'closed'
    ? { profile: 'concurrent', concurrencies: [sc.level], limits: { maxRequests: sc.requests }, workload: workload(sc.outputTokens) }
    : { profile: 'constant', rates: [sc.level], limits: { maxRequests: sc.requests }, workload: workload(sc.outputTokens) };
}

/** Least-squares slope of the k-th time against k: one late first or last send does not swing it as (n−1)/span does. */
function rate(times: number[]): number {
  const s = [...times].sort((a, b) => a - b);
  const n = s.length;
  if (n < 2) return Number.NaN;
  const mk = (n - 1) / 2;
  const mt = s.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let k = 0; k < n; k++) {
    num += (k - mk) * ((s[k] as number) - mt);
    den += (k - mk) * (k - mk);
  }
  return (den / num) * 1000;
}

async function runScenario(sim: SimChild, sc: Scenario, workers: number, since: number): Promise<{ row: Row; cursor: number }> {
  const sender = await openSender(workers, sim.url, connectionsPerThread(sc, workers));
  const records: RequestRecord[] = [];
  let measuring = false;
  const runner = createHttpStageRunner({
    target: sender.target, dialect: getDialect('openai-completions'), model: MODEL, forceLength: true, stream: true, seed: 1,
    // Measured requests only: a row's cool-down requests (sent after its window while the load stays on, the ones
    // in flight at the end cancelled) are not the scenario's, and a cut one is no failure.
    onRecord: (r) => void (measuring && r.cooldown !== true && records.push(r)),
  });
  // A pool's threads are new isolates: warm them as this thread was, or the first rows measure V8's tiers.
  if (workers > 1) await runBenchmark(profile(WARMUP), runner);
  measuring = true;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  const health = new HealthMonitor();
  loop.enable();
  const cpu0 = process.cpuUsage();
  const sim0 = await sim.usage();
  const wait0 = runqueueWaitMs();
  const t0 = performance.now();
  const result = await runBenchmark(profile(sc), runner);
  const wall = performance.now() - t0;
  // process-wide: every worker thread's CPU and CPU wait count too
  const cpu = process.cpuUsage(cpu0);
  const wait = runqueueWaitMs() - wait0;
  const sim1 = await sim.usage();
  const simCpu = sim1.cpuMicros - sim0.cpuMicros;
  loop.disable();
  const h = health.finish(result.stages);
  const workerStats = await sender.workerStats();
  await sender.close();

  const truthList: TruthRecord[] = await sim.trace(since);
  const truth = new Map(truthList.map((t) => [t.id, t]));
  const cursor = truthList.reduce((m, t) => Math.max(m, t.seq), since);
  // Pool stamps are already on this thread's clock, the one sim.toClientMs maps the sim's clock onto.
  const j = joinWithTruth(records, truth, sim.toClientMs);
  const ok = records.filter((r) => r.status === 'ok').length;
  const row: Row = {
    scenario: sc, workers, ok, failed: records.length - ok, joined: j.joined,
    ttft: dist(j.ttftErr), itl: dist(j.itlErr), e2e: dist(j.e2eErr), tokenEps: dist(j.tokenEps), serverLate: dist(j.serverLate), sendToArrival: dist(j.sendToArrival),
    tokensExact: j.tokensExact, tokensWrong: j.tokensWrong.slice(0, 20),
    dispatchLag: dist(records.map((r) => r.dispatchLagMs - r.clientQueueMs)),
    connectWait: dist(records.map((r) => r.connectWaitMs ?? 0)),
    loopP99Ms: Math.max(0, loop.percentile(99) / 1e6 - 1), health: h, clockResidualUs: sender.clockResidualUs,
    ...(workerStats.length > 0
      ? { workerLoopP99Ms: Math.max(...workerStats.map((s) => s.eventLoopDelayP99Ms)), workerRequests: workerStats.map((s) => s.requests) }
      : {}),
    clientCpuShare: (cpu.user + cpu.system) / 1000 / wall, serverCpuShare: simCpu / 1000 / wall,
    clientRunqueueShare: wait / wall, serverRunqueueShare: (sim1.runqueueWaitMs - sim0.runqueueWaitMs) / wall, wallS: wall / 1000,
  };
  if (sc.kind === 'open') {
    row.targetRate = sc.level;
    row.achievedRate = rate(records.map((r) => r.sentAtMs));
    // this scenario's arrivals only: a pool's warm-up is in the same stretch of the trace
    const measured = new Set(records.map((r) => r.serverRequestId));
    row.serverSeenRate = rate(truthList.filter((t) => measured.has(String(t.id))).map((t) => t.arrivalMs));
  }
  return { row, cursor };
}

function chosenScenarios(): Scenario[] {
  const only = flagValue(process.argv, 'only');
  if (only === undefined) return SCENARIOS;
  const names = only.split(',');
  const unknown = names.filter((n) => !SCENARIOS.some((s) => s.name === n));
  if (unknown.length > 0) {
    throw new InferbenchError('E_USAGE', `--only=${only}: no scenario named ${unknown.join(', ')}; choose from ${SCENARIOS.map((s) => s.name).join(', ')}`);
  }
  return SCENARIOS.filter((s) => names.includes(s.name));
}

async function main(): Promise<void> {
  let scenarios: Scenario[];
  let workerCounts: number[];
  try {
    scenarios = chosenScenarios();
    workerCounts = parseWorkerCounts(flagValue(process.argv, 'workers'), [1, 2]);
  } catch (err) {
    if (!isUserError(err)) throw err;
    process.stderr.write(`bench:fidelity: ${(err as Error).message}\n`);
    process.exit(2);
  }
  const ts = flagValue(process.argv, 'time-scale');
  const sim = await startSimChild(['--model', MODEL, '--max-num-seqs', '2048', ...(ts ? ['--time-scale', ts] : [])]);
  process.stderr.write(`sim at ${sim.url}; clock join error ≤ ${(sim.clockErrorMs * 1000).toFixed(2)} µs (timeOrigin join differs by ${(sim.timeOriginDisagreementMs * 1000).toFixed(1)} µs)\n`);
  const rows: Row[] = [];
  try {
    let { cursor } = await runScenario(sim, WARMUP, 1, 0);
    // Worker counts side by side per scenario: the rows compared were measured minutes, not a whole run, apart.
    for (const sc of scenarios) {
      for (const workers of workerCounts) {
        const r = await runScenario(sim, sc, workers, cursor);
        cursor = r.cursor;
        rows.push(r.row);
        process.stderr.write(`done ${sc.name} with ${workers} worker${workers > 1 ? 's' : ''} in ${r.row.wallS.toFixed(1)} s\n`);
      }
    }
  } finally {
    await sim.close();
  }
  printTables(rows);
  mkdirSync('bench/out', { recursive: true });
  const file = `bench/out/fidelity-${stamp()}.json`;
  const residualUs = Math.max(0, ...rows.map((r) => r.clockResidualUs));
  writeFileSync(file, JSON.stringify({ machine: machine(), clock: { joinErrorMs: sim.clockErrorMs, timeOriginDisagreementMs: sim.timeOriginDisagreementMs, workerResidualUs: residualUs }, workerCounts, rows }, null, 2));
  console.log(`\nclock join: CLOCK_MONOTONIC pairs, error ≤ ${(sim.clockErrorMs * 1000).toFixed(2)} µs; worker threads → this thread ≤ ${residualUs.toFixed(2)} µs (largest pool residual); full data: ${file}`);
}

await main();
