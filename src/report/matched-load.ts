import { onCurve, type StageSummary } from '../metrics/summary.js';
import type { StoredRun } from '../store/run-store.js';

/**
 * Where two runs are compared at the same load. A closed loop's load is its streams: rows of the same concurrency
 * match directly (as `gate` matches them), whatever req/s each achieved. Rows of other loads are read on the curve
 * of latency against achieved req/s — which is only a curve when req/s rises with the load: a closed loop whose
 * added streams only queue (llama.cpp with 2 slots: 0.75, 0.74, 0.65 req/s at 2, 3, 4 streams) gives two rows of
 * about one req/s with very different latencies, and reading between them mixes a queued row into the figure.
 */

/**
 * Rows that kept up with a steady offered load: the points of the latency-vs-throughput curve (a burst
 * "throughput" row has no rate to match).
 */
export const loadRows = (run: StoredRun): StageSummary[] => run.summary.stages.filter((s) => onCurve(s) && s.kind !== 'burst');

/** A closed-loop row's streams (the synchronous row's is 1); undefined for other rows. */
export const streamsOf = (s: StageSummary): number | undefined => (s.kind === 'closed' && s.concurrency !== undefined ? s.concurrency : undefined);

/**
 * Whether rows can be read between by achieved req/s. Open-loop rows that kept up sit at their target rates, which
 * rise with the load by construction; closed-loop rows must be checked: by streams, each distinct concurrency's req/s
 * above the one below it (a load run twice — a capacity probe's re-run — counts once, by its last row).
 */
export function risesWithLoad(rows: readonly StageSummary[]): boolean {
  const byStreams = new Map<number, number>();
  for (const s of rows) {
    const n = streamsOf(s);
    if (n !== undefined) byStreams.set(n, s.requestThroughput);
  }
  const xs = [...byStreams.entries()].sort(([a], [b]) => a - b).map(([, x]) => x);
  return xs.every((x, i) => i === 0 || x > (xs[i - 1] as number));
}

/** A run's closed-loop row at `streams` (the last one, when the load was run again); undefined when it has none. */
export function rowAtStreams(run: StoredRun, streams: number): StageSummary | undefined {
  return loadRows(run).filter((s) => streamsOf(s) === streams).at(-1);
}

/**
 * When every run's rows are closed loops: the highest concurrency every run measured (rows matched directly there);
 * undefined when a run has another kind of row or the runs share no concurrency.
 */
export function commonConcurrency(runs: readonly StoredRun[]): number | undefined {
  const sets = runs.map((r) => {
    const rows = loadRows(r);
    return rows.length > 0 && rows.every((s) => streamsOf(s) !== undefined) ? new Set(rows.map((s) => streamsOf(s) as number)) : undefined;
  });
  if (sets.some((s) => s === undefined)) return undefined;
  const [first, ...rest] = sets as Set<number>[];
  const shared = [...(first ?? [])].filter((c) => rest.every((s) => s.has(c)));
  return shared.length > 0 ? Math.max(...shared) : undefined;
}
