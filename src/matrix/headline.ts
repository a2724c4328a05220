/** A cell's headline figures from its run's summary: the busiest row that had successes, and a capacity answer. */
import type { RunSummaryDoc } from '../results/run-summary.js';
import type { CellHeadline } from './types.js';

const num = (v: number | undefined): number | null => (v !== undefined && Number.isFinite(v) ? v : null);

export function headlineOf(doc: RunSummaryDoc): CellHeadline {
  const withOk = doc.stages.filter((s) => s.requests.ok > 0);
  const best = [...withOk].sort((a, b) => (num(b.requestThroughput) ?? 0) - (num(a.requestThroughput) ?? 0))[0];
  const ok = doc.stages.reduce((n, s) => n + s.requests.ok, 0);
  const errors = doc.stages.reduce((n, s) => n + s.requests.errors, 0);
  const c = doc.capacity;
  return {
    profile: doc.profile,
    rows: doc.stages.length,
    requestThroughput: num(best?.requestThroughput),
    outputTokenThroughput: num(best?.outputTokenThroughput),
    ttftMedianMs: num(best?.metrics.ttftMs?.median),
    itlMedianMs: num(best?.metrics.itlMs?.median),
    failedShare: ok + errors > 0 ? errors / (ok + errors) : 0,
    ...(c ? { capacity: { axis: c.axis, unit: c.unit, feasibleMax: c.feasibleMax, precision: c.precision, verdict: c.verdict } } : {}),
  };
}
