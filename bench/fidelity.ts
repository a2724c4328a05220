/**
 * Measurement error of inferbench's client against the simulator's ground truth.
 * `inferbench sim` runs in its own process; the client is the library (HttpTarget +
 * createHttpStageRunner + runBenchmark). Each record is joined to the sim's truth by x-sim-request-id.
 *
 *   npm run bench:fidelity [-- --quick]
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { getDialect } from '../src/dialects/index.js';
import { runBenchmark } from '../src/load/benchmark.js';
import { createHttpStageRunner } from '../src/load/http-runner.js';
import type { ProfileConfig } from '../src/load/profiles.js';
import { HealthMonitor } from '../src/metrics/health.js';
import type { RequestRecord } from '../src/metrics/record.js';
import type { TruthRecord } from '../src/sim/server/index.js';
import { HttpTarget } from '../src/transport/http.js';
import type { Workload } from '../src/workload/types.js';
import { joinWithTruth } from './_join.js';
import { runqueueWaitMs } from './_sched.js';
import { startSimChild, type SimChild } from './_sim-child.js';
import { dist, fmt, machine, stamp, table, type Dist } from './_stats.js';

interface Scenario {
  name: string;
  kind: 'closed' | 'open';
  /** Streams (closed) or req/s (open). */
  level: number;
  requests: number;
  outputTokens: number;
}

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

function workload(outputTokens: number): Workload {
  return {
    description: `short prompt, ${outputTokens} output tokens`,
    item: (i) => ({ prompt: `${i} tell me a story about the sea`, promptTokens: 9, promptTokenSource: 'client-tokenizer', outputTokens }),
  };
}

interface Row {
  scenario: Scenario;
  ok: number;
  failed: number;
  joined: number;
  ttft: Dist;
  itl: Dist;
  e2e: Dist;
  tokenEps: Dist;
  serverLate: Dist;
  sendToArrival: Dist;
  tokensExact: number;
  tokensWrong: unknown[];
  dispatchLag: Dist;
  targetRate?: number;
  achievedRate?: number;
  serverSeenRate?: number;
  loopP99Ms: number;
  health: ReturnType<HealthMonitor['finish']>;
  clientCpuShare: number;
  serverCpuShare: number;
  /** Share of wall time the process was runnable but not running (waiting for a CPU). */
  clientRunqueueShare: number;
  serverRunqueueShare: number;
  wallS: number;
}

const pct = (x: number): string => `${(x * 100).toFixed(0)}%`;

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

async function runScenario(sim: SimChild, sc: Scenario, since: number): Promise<{ row: Row; cursor: number }> {
  const target = new HttpTarget({ baseUrl: sim.url, connections: sc.kind === 'closed' ? sc.level : 4096 });
  const records: RequestRecord[] = [];
  const runner = createHttpStageRunner({
    target, dialect: getDialect('openai-completions'), model: MODEL, forceLength: true, stream: true, seed: 1,
    onRecord: (r) => void records.push(r),
  });
  const cfg: ProfileConfig =
    sc.kind === 'closed'
      ? { profile: 'concurrent', concurrencies: [sc.level], limits: { maxRequests: sc.requests }, workload: workload(sc.outputTokens) }
      : { profile: 'constant', rates: [sc.level], limits: { maxRequests: sc.requests }, workload: workload(sc.outputTokens) };
  const loop = monitorEventLoopDelay({ resolution: 1 });
  const health = new HealthMonitor();
  loop.enable();
  const cpu0 = process.cpuUsage();
  const sim0 = await sim.usage();
  const wait0 = runqueueWaitMs();
  const t0 = performance.now();
  const result = await runBenchmark(cfg, runner);
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const wait = runqueueWaitMs() - wait0;
  const sim1 = await sim.usage();
  const simCpu = sim1.cpuMicros - sim0.cpuMicros;
  loop.disable();
  const h = health.finish(result.stages);
  await target.close();

  const truthList: TruthRecord[] = await sim.trace(since);
  const truth = new Map(truthList.map((t) => [t.id, t]));
  const cursor = truthList.reduce((m, t) => Math.max(m, t.seq), since);
  const j = joinWithTruth(records, truth, sim.toClientMs);
  const ok = records.filter((r) => r.status === 'ok').length;
  const row: Row = {
    scenario: sc, ok, failed: records.length - ok, joined: j.joined,
    ttft: dist(j.ttftErr), itl: dist(j.itlErr), e2e: dist(j.e2eErr), tokenEps: dist(j.tokenEps), serverLate: dist(j.serverLate), sendToArrival: dist(j.sendToArrival),
    tokensExact: j.tokensExact, tokensWrong: j.tokensWrong.slice(0, 20),
    dispatchLag: dist(records.map((r) => r.dispatchLagMs - r.clientQueueMs)),
    loopP99Ms: Math.max(0, loop.percentile(99) / 1e6 - 1), health: h,
    clientCpuShare: (cpu.user + cpu.system) / 1000 / wall, serverCpuShare: simCpu / 1000 / wall,
    clientRunqueueShare: wait / wall, serverRunqueueShare: (sim1.runqueueWaitMs - sim0.runqueueWaitMs) / wall, wallS: wall / 1000,
  };
  if (sc.kind === 'open') {
    row.targetRate = sc.level;
    row.achievedRate = rate(records.map((r) => r.sentAtMs));
    row.serverSeenRate = rate(truthList.map((t) => t.arrivalMs));
  }
  return { row, cursor };
}

function printTables(rows: Row[]): void {
  const e = (d: Dist): string => `${fmt(d.p50)} / ${fmt(d.p99)} / ${fmt(d.max, 2)}`;
  console.log('\n|client − truth| in ms, p50 / p99 / max (truth = sim write times, anchored at the client send time)');
  console.log(table(
    ['scenario', 'ok/failed', 'TTFT err', 'ITL err', 'E2E err', 'token ε p1/p50/p99', 'tokens exact', 'loop p99', 'client CPU / CPU wait', 'sim CPU / CPU wait', 'sim lateness p50/p99'],
    rows.map((r) => [
      r.scenario.name, `${r.ok}/${r.failed}`, e(r.ttft), e(r.itl), e(r.e2e), `${fmt(r.tokenEps.p1, 2)} / ${fmt(r.tokenEps.p50, 2)} / ${fmt(r.tokenEps.p99, 2)}`, `${r.tokensExact}/${r.joined}`,
      fmt(r.loopP99Ms, 2), `${pct(r.clientCpuShare)} / ${pct(r.clientRunqueueShare)}`, `${pct(r.serverCpuShare)} / ${pct(r.serverRunqueueShare)}`, `${fmt(r.serverLate.p50, 2)} / ${fmt(r.serverLate.p99, 2)}`,
    ]),
  ));
  const open = rows.filter((r) => r.targetRate !== undefined);
  if (open.length === 0) return;
  console.log('\nopen loop (constant arrivals): achieved vs target rate, dispatch lag (send − target time) in ms');
  console.log(table(
    ['scenario', 'target req/s', 'sent req/s', 'Δ', 'sim-seen req/s', 'lag p50', 'lag p99', 'lag max'],
    open.map((r) => [
      r.scenario.name, fmt(r.targetRate as number, 1), fmt(r.achievedRate as number, 1), `${((((r.achievedRate as number) / (r.targetRate as number)) - 1) * 100).toFixed(2)}%`,
      fmt(r.serverSeenRate as number, 1), fmt(r.dispatchLag.p50), fmt(r.dispatchLag.p99), fmt(r.dispatchLag.max, 2),
    ]),
  ));
}

async function main(): Promise<void> {
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7);
  const scenarios = only ? SCENARIOS.filter((s) => only.split(',').includes(s.name)) : SCENARIOS;
  const ts = process.argv.find((a) => a.startsWith('--time-scale='))?.slice(13);
  const sim = await startSimChild(['--model', MODEL, '--max-num-seqs', '2048', ...(ts ? ['--time-scale', ts] : [])]);
  process.stderr.write(`sim at ${sim.url}; clock join error ≤ ${(sim.clockErrorMs * 1000).toFixed(2)} µs (timeOrigin join differs by ${(sim.timeOriginDisagreementMs * 1000).toFixed(1)} µs)\n`);
  const rows: Row[] = [];
  try {
    // warm-up (JIT, connection set-up paths), excluded
    let { cursor } = await runScenario(sim, { name: 'warmup', kind: 'closed', level: 100, requests: 300, outputTokens: 16 }, 0);
    for (const sc of scenarios) {
      const r = await runScenario(sim, sc, cursor);
      cursor = r.cursor;
      rows.push(r.row);
      process.stderr.write(`done ${sc.name} in ${r.row.wallS.toFixed(1)} s\n`);
    }
  } finally {
    await sim.close();
  }
  printTables(rows);
  mkdirSync('bench/out', { recursive: true });
  const file = `bench/out/fidelity-${stamp()}.json`;
  writeFileSync(file, JSON.stringify({ machine: machine(), clock: { joinErrorMs: sim.clockErrorMs, timeOriginDisagreementMs: sim.timeOriginDisagreementMs }, rows }, null, 2));
  console.log(`\nclock join: CLOCK_MONOTONIC pairs, error ≤ ${(sim.clockErrorMs * 1000).toFixed(2)} µs; full data: ${file}`);
}

await main();
