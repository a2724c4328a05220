/** The rows bench/fidelity.ts measures and the tables it prints from them. */
import type { HealthMonitor } from '../src/metrics/health.js';
import { fmt, table, type Dist } from './_stats.js';

export interface Scenario {
  name: string;
  kind: 'closed' | 'open';
  /** Streams (closed) or req/s (open). */
  level: number;
  requests: number;
  outputTokens: number;
}

export interface Row {
  scenario: Scenario;
  /** Load threads that sent and stamped (1: this thread's own HttpTarget, no pool). */
  workers: number;
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
  /**
   * Part of the lag spent between handing a request to the connection pool and writing it: opening a connection,
   * or waiting for one when the pool's cap (per thread) is full because the server answers slower than the rate.
   */
  connectWait: Dist;
  targetRate?: number;
  achievedRate?: number;
  serverSeenRate?: number;
  /** The coordinator's (this thread's) event-loop delay p99. */
  loopP99Ms: number;
  /** Worst worker thread's event-loop delay p99 over its life (warm-up included); absent with one thread. */
  workerLoopP99Ms?: number;
  /** Requests each worker sent (warm-up included). */
  workerRequests?: number[];
  /** Bound on the workers' clock offsets to the coordinator, µs. */
  clockResidualUs: number;
  health: ReturnType<HealthMonitor['finish']>;
  /** Whole client process (every thread). */
  clientCpuShare: number;
  serverCpuShare: number;
  /** Share of wall time the process's threads were runnable but not running (waiting for a CPU), summed over threads. */
  clientRunqueueShare: number;
  serverRunqueueShare: number;
  wallS: number;
}

const pct = (x: number): string => `${(x * 100).toFixed(0)}%`;
const errCell = (d: Dist): string => `${fmt(d.p50)} / ${fmt(d.p99)} / ${fmt(d.max, 2)}`;
const ratio = (base: number, other: number): string => (other > 0 && Number.isFinite(base / other) ? `${(base / other).toFixed(2)}×` : '—');

export function printTables(rows: readonly Row[]): void {
  console.log('\n|client − truth| in ms, p50 / p99 / max (truth = sim write times, anchored at the client send time)');
  console.log(table(
    ['scenario', 'workers', 'ok/failed', 'TTFT err', 'ITL err', 'E2E err', 'token ε p1/p50/p99', 'tokens exact', 'loop p99 main/workers', 'client CPU / CPU wait', 'sim CPU / CPU wait', 'sim lateness p50/p99'],
    rows.map((r) => [
      r.scenario.name, String(r.workers), `${r.ok}/${r.failed}`, errCell(r.ttft), errCell(r.itl), errCell(r.e2e),
      `${fmt(r.tokenEps.p1, 2)} / ${fmt(r.tokenEps.p50, 2)} / ${fmt(r.tokenEps.p99, 2)}`, `${r.tokensExact}/${r.joined}`,
      `${fmt(r.loopP99Ms, 2)} / ${r.workerLoopP99Ms === undefined ? '—' : fmt(r.workerLoopP99Ms, 2)}`,
      `${pct(r.clientCpuShare)} / ${pct(r.clientRunqueueShare)}`, `${pct(r.serverCpuShare)} / ${pct(r.serverRunqueueShare)}`,
      `${fmt(r.serverLate.p50, 2)} / ${fmt(r.serverLate.p99, 2)}`,
    ]),
  ));
  printWorkerRatios(rows);
  const open = rows.filter((r) => r.targetRate !== undefined);
  if (open.length === 0) return;
  console.log('\nopen loop (constant arrivals): achieved vs target rate, dispatch lag (send − target time) in ms; conn wait = the part spent getting a connection');
  console.log(table(
    ['scenario', 'workers', 'target req/s', 'sent req/s', 'Δ', 'sim-seen req/s', 'lag p50', 'lag p99', 'lag max', 'of it conn wait p50/p99'],
    open.map((r) => [
      r.scenario.name, String(r.workers), fmt(r.targetRate as number, 1), fmt(r.achievedRate as number, 1),
      `${((((r.achievedRate as number) / (r.targetRate as number)) - 1) * 100).toFixed(2)}%`,
      fmt(r.serverSeenRate as number, 1), fmt(r.dispatchLag.p50), fmt(r.dispatchLag.p99), fmt(r.dispatchLag.max, 2),
      `${fmt(r.connectWait.p50)} / ${fmt(r.connectWait.p99)}`,
    ]),
  ));
}

/**
 * Per scenario, the first worker count run (the base) against each other: TTFT/ITL error p99 and base ÷ other.
 * Above 1× the extra threads measured closer to the truth; below, they cost more than they gave.
 */
function printWorkerRatios(rows: readonly Row[]): void {
  const lines: string[][] = [];
  for (const name of [...new Set(rows.map((r) => r.scenario.name))]) {
    const [base, ...others] = rows.filter((r) => r.scenario.name === name);
    if (!base) continue;
    for (const o of others) {
      lines.push([
        name, `${base.workers} → ${o.workers}`, fmt(base.ttft.p99), fmt(o.ttft.p99), ratio(base.ttft.p99, o.ttft.p99),
        fmt(base.itl.p99), fmt(o.itl.p99), ratio(base.itl.p99, o.itl.p99),
        `${pct(base.clientRunqueueShare)} → ${pct(o.clientRunqueueShare)}`,
      ]);
    }
  }
  if (lines.length === 0) return;
  console.log('\nworkers: error p99 in ms, base → more workers; ratio = base p99 ÷ p99 with more workers (> 1× = more accurate)');
  console.log(table(['scenario', 'workers', 'TTFT p99 base', 'TTFT p99', 'TTFT ratio', 'ITL p99 base', 'ITL p99', 'ITL ratio', 'client CPU wait'], lines));
}
