import { statistic, subsetOf, unitBaselines, type PreparedSide } from './bootstrap.js';
import type { GateMetric } from './thresholds.js';

/**
 * Run-to-run variation: what separates two runs of one unchanged server beyond their requests' own spread (the
 * machine's load, the server's state, the minute it ran in). The request bootstrap cannot see it inside one run, so
 * a single run's interval is far narrower than the spread of its repeats — on a shared CPU, runs of one llama.cpp
 * configuration ranged 3.59–4.71 req/s while each run's own interval was ±2–3%. Each side's figure is therefore
 * given a run-level uncertainty (1 sd of ln figure, per run) from the best evidence there is:
 *
 * - repeats (several runs on the side): their spread, which the hierarchical bootstrap already resamples;
 * - the run's own drift: the run's measured requests split into time blocks (in send order, BLOCK_REQUESTS or more
 *   each, at most MAX_BLOCKS), the figure read over each block; the spread of the blocks' figures is how far the
 *   level wandered while the run ran, and a run made at another moment may sit anywhere in it — a floor on the
 *   run-level uncertainty of every side (it also holds the blocks' own sampling noise: it errs towards caution);
 * - a stated prior, RUN_TO_RUN_PRIOR per run, for a side with one run: one run cannot show its run-to-run
 *   variation, so it is assumed (docs/gate.md) and the larger of it and the drift is taken.
 *
 * The error share (a difference of shares) and an open loop's throughput (set by the client's schedule, not by the
 * server) get none.
 */

/** One run's figure around its configuration's level: 1 sd of ln(figure), relative (docs/gate.md). */
export const RUN_TO_RUN_PRIOR = 0.04;
/** Fewest requests in a time block, and most blocks a run is split into. */
export const BLOCK_REQUESTS = 15;
export const MAX_BLOCKS = 6;

export type RunNoiseSource = 'prior' | 'drift' | 'repeats';

export interface RunNoise {
  /** The run-level uncertainty of one run of the side: 1 sd of ln(figure). */
  sd: number;
  /** What set it: the prior (one run), the runs' own drift between time blocks, or the repeats' spread. */
  from: RunNoiseSource;
  /** Variance of ln(side's figure) to add to what the bootstrap resampled (0 when the repeats already hold it). */
  extraVariance: number;
}

const sampleSd = (xs: readonly number[]): number => {
  if (xs.length < 2) return Number.NaN;
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
};

/** Whether run-to-run variation applies to a metric of this side (see above). */
function applies(side: PreparedSide, metric: GateMetric): boolean {
  if (metric.kind === 'latency') return true;
  return metric.kind === 'throughput' && side.row.closed;
}

/** A unit's local request indices in send order, cut into blocks of near-equal size; [] when too few requests. */
export function timeBlocks(sentAt: Float64Array | undefined, n: number): number[][] {
  const count = Math.min(MAX_BLOCKS, Math.floor(n / BLOCK_REQUESTS));
  if (count < 2) return [];
  const order = Array.from({ length: n }, (_, i) => i);
  if (sentAt && sentAt.length === n && sentAt.every(Number.isFinite)) order.sort((a, b) => ((sentAt[a] as number) - (sentAt[b] as number)) || a - b);
  return Array.from({ length: count }, (_, b) => order.slice(Math.round((b * n) / count), Math.round(((b + 1) * n) / count)));
}

/** The sd of ln(figure) over one unit's time blocks; undefined when it has fewer than two blocks with a figure. */
function blockDrift(side: PreparedSide, unit: number, metric: GateMetric, base: readonly { e2e: number; out: number }[]): number | undefined {
  const u = side.row.units[unit];
  if (!u) return undefined;
  const logs = timeBlocks(u.sentAt, u.ok.length)
    .map((block) => statistic(side, subsetOf(side, unit, block, base), metric))
    .filter((v) => Number.isFinite(v) && v > 0)
    .map(Math.log);
  const sd = sampleSd(logs);
  return Number.isFinite(sd) ? sd : undefined;
}

/** The run-level uncertainty of a side's figure for one metric; undefined where none applies. */
export function sideRunNoise(side: PreparedSide, metric: GateMetric): RunNoise | undefined {
  if (!applies(side, metric)) return undefined;
  const base = unitBaselines(side);
  const k = side.row.units.length;
  const drifts = side.row.units.map((_, i) => blockDrift(side, i, metric, base)).filter((d): d is number => d !== undefined);
  const drift = drifts.length > 0 ? Math.sqrt(drifts.reduce((a, d) => a + d * d, 0) / drifts.length) : 0;
  if (k === 1) {
    const sd = Math.max(RUN_TO_RUN_PRIOR, drift);
    return { sd, from: drift > RUN_TO_RUN_PRIOR ? 'drift' : 'prior', extraVariance: sd * sd };
  }
  // Repeats: their spread is in the bootstrap already; the drift tops it up where the few repeats happened to agree.
  const own = side.row.units
    .map((u, i) => statistic(side, subsetOf(side, i, Array.from({ length: u.ok.length }, (_, j) => j), base), metric))
    .filter((v) => Number.isFinite(v) && v > 0)
    .map(Math.log);
  const between = own.length >= 2 ? sampleSd(own) : 0;
  if (drift > between) return { sd: drift, from: 'drift', extraVariance: (drift * drift - between * between) / k };
  return { sd: between, from: 'repeats', extraVariance: 0 };
}

const Z95 = 1.96;

/**
 * A bootstrap interval of a ratio's change widened by extra run-level variance (of ln ratio): each side of the
 * interval, on the log scale, grows as √(its half-width² + (1.96 sd)²) — the bootstrap's asymmetry is kept.
 */
export function widen(change: number, low: number, high: number, extraVariance: number): { low: number; high: number } {
  if (!(extraVariance > 0) || !(change > -1) || !(low > -1) || !(high > -1)) return { low, high };
  const c = Math.log1p(change);
  const add = Z95 * Z95 * extraVariance;
  const l = c - Math.sqrt((c - Math.log1p(low)) ** 2 + add);
  const h = c + Math.sqrt((Math.log1p(high) - c) ** 2 + add);
  return { low: Math.expm1(l), high: Math.expm1(h) };
}
