/** A cell's headline figures from its run's summary: the busiest row that had successes, and a capacity answer. */
import type { CapacityResult } from '../results/capacity.js';
import type { RunSummaryDoc } from '../results/run-summary.js';
import type { StageSummary } from '../results/stage.js';
import type { CellHeadline } from './types.js';

const num = (v: number | undefined): number | null => (v !== undefined && Number.isFinite(v) ? v : null);

/** A capacity probe that met the SLO at or under the answer (a pass above it is set aside by the search's fit). */
function metSlo(c: CapacityResult, s: StageSummary): boolean {
  const probe = c.probes.find((p) => p.stage === s.index);
  return probe !== undefined && probe.pass && c.feasibleMax !== null && probe.load <= c.feasibleMax;
}

export function headlineOf(doc: RunSummaryDoc): CellHeadline {
  const withOk = doc.stages.filter((s) => s.requests.ok > 0);
  const c = doc.capacity;
  // A capacity cell is headlined by what it served within its SLO: the busiest probe that met it, not a probe past
  // the capacity (its req/s and TTFT are a queue's). When none met it, the busiest row, marked as outside the SLO.
  const within = c ? withOk.filter((s) => metSlo(c, s)) : [];
  const pool = within.length > 0 ? within : withOk;
  const best = [...pool].sort((a, b) => (num(b.requestThroughput) ?? 0) - (num(a.requestThroughput) ?? 0))[0];
  const ok = doc.stages.reduce((n, s) => n + s.requests.ok, 0);
  const errors = doc.stages.reduce((n, s) => n + s.requests.errors, 0);
  return {
    profile: doc.profile,
    rows: doc.stages.length,
    requestThroughput: num(best?.requestThroughput),
    outputTokenThroughput: num(best?.outputTokenThroughput),
    ttftMedianMs: num(best?.metrics.ttftMs?.median),
    itlMedianMs: num(best?.metrics.itlMs?.median),
    failedShare: ok + errors > 0 ? errors / (ok + errors) : 0,
    ...(best ? { row: best.label } : {}),
    ...(c && best ? { withinSlo: within.length > 0 } : {}),
    ...(c ? { capacity: { axis: c.axis, unit: c.unit, feasibleMax: c.feasibleMax, precision: c.precision, verdict: c.verdict } } : {}),
  };
}
