import type { StageSummary } from '../metrics/summary.js';
import type { StoredRun } from '../store/run-store.js';

/**
 * Whether a verdict's difference is one: a tie, a gap inside run-to-run noise, or a lead.
 *
 * - Tie: the two figures are within TIE_TOLERANCE of each other (relative): identical runs read as a tie, never
 *   "+0.0% over".
 * - Noise: a single run's figure carries its own sampling error. With `--repeat N` it is the 95% half-width over
 *   the repeats (summary.json `intervals`); otherwise it is estimated from the row itself:
 *   - a mean latency (TTFT, ITL, latency per output token): 1.96 × the standard error of the mean of its
 *     per-request values (stddev / √count);
 *   - a throughput (output tokens/s, req/s) of a closed loop or a burst: by Little's law (throughput = requests in
 *     flight / mean latency, the requests in flight set by the client) its relative error is the mean request
 *     latency's: (stddev / mean of the per-request latencies) / √N over the N successes;
 *   - a throughput of an open loop: its arrivals are random, so the counting error of the N successes in its
 *     window, taken as Poisson: relative standard error √(1 + cv²) / √N, cv the output lengths' coefficient of
 *     variation (for tokens/s).
 *   Two figures whose gap is within 1.96 × √(seA² + seB²) (95%) are within noise: the verdict says so and suggests
 *   `--repeat`. Predicted runs are not weighed for noise: both ran in virtual time from one seed's arrivals, so
 *   their difference is the engines', not chance.
 */
export const TIE_TOLERANCE = 0.001;
const Z95 = 1.96;

/** A figure and its 95% half-width (0 when it has no noise to weigh). */
export interface Noisy {
  value: number;
  halfWidth95: number;
  /** Where the half-width came from, for the verdict line: "--repeat 3" or "each row's own spread". */
  source: 'repeat' | 'row' | 'none';
}

export type Judgement = { kind: 'tie' } | { kind: 'noise'; bound: number; source: Noisy['source'] } | { kind: 'lead' };

export function judge(a: Noisy, b: Noisy): Judgement {
  const scale = Math.max(Math.abs(a.value), Math.abs(b.value));
  const gap = Math.abs(a.value - b.value);
  if (scale === 0 || gap <= TIE_TOLERANCE * scale) return { kind: 'tie' };
  const bound = Math.hypot(a.halfWidth95, b.halfWidth95);
  if (bound > 0 && gap <= bound) return { kind: 'noise', bound, source: a.source === 'repeat' && b.source === 'repeat' ? 'repeat' : 'row' };
  return { kind: 'lead' };
}

/** Whether a run's figures carry run-to-run noise worth weighing (predicted runs do not: see above). */
export const weighsNoise = (run: StoredRun): boolean => run.summary.context.predicted !== true;

const repeatHalfWidth = (s: StageSummary, key: string): number | undefined => {
  const ci = s.intervals?.[key];
  return ci && ci.n > 1 && Number.isFinite(ci.halfWidth) ? ci.halfWidth : undefined;
};

/** A row's output (or request) throughput with its 95% half-width. */
export function throughputNoise(s: StageSummary, value: number, key: 'outputTokenThroughput' | 'requestThroughput', measured: boolean): Noisy {
  if (!measured) return { value, halfWidth95: 0, source: 'none' };
  const hw = repeatHalfWidth(s, key);
  if (hw !== undefined) return { value, halfWidth95: hw, source: 'repeat' };
  const n = s.requests.ok;
  if (n <= 0) return { value, halfWidth95: 0, source: 'none' };
  const cvOf = (st: StageSummary['metrics']['e2eMs']): number => (st && st.mean > 0 && Number.isFinite(st.stddev) ? st.stddev / st.mean : 0);
  const e2e = s.metrics.e2eMs;
  const relative =
    s.kind !== 'open' && e2e
      ? cvOf(e2e) / Math.sqrt(n)
      : Math.sqrt(1 + (key === 'outputTokenThroughput' ? cvOf(s.metrics.outputTokens) ** 2 : 0)) / Math.sqrt(n);
  return { value, halfWidth95: Z95 * Math.abs(value) * relative, source: 'row' };
}

/** The mean of a per-request latency with its 95% half-width (repeats' interval, else the standard error). */
export function meanNoise(s: StageSummary, metric: 'ttftMs' | 'itlMs' | 'latencyPerOutputTokenMs', repeatKey: string | undefined, measured: boolean): Noisy | undefined {
  const st = s.metrics[metric];
  if (!st || !Number.isFinite(st.mean)) return undefined;
  if (!measured) return { value: st.mean, halfWidth95: 0, source: 'none' };
  const hw = repeatKey !== undefined ? repeatHalfWidth(s, repeatKey) : undefined;
  if (hw !== undefined) return { value: st.mean, halfWidth95: hw, source: 'repeat' };
  return st.count > 1 && Number.isFinite(st.stddev) ? { value: st.mean, halfWidth95: (Z95 * st.stddev) / Math.sqrt(st.count), source: 'row' } : { value: st.mean, halfWidth95: 0, source: 'none' };
}

/** A value read between two rows (x in [0, 1] from a to b): its half-width from theirs, weighted as the value is. */
export function interpolatedNoise(value: number, a: Noisy | undefined, b: Noisy | undefined, t: number): Noisy {
  const ha = a?.halfWidth95 ?? 0;
  const hb = b?.halfWidth95 ?? 0;
  const source = a?.source === 'repeat' && b?.source === 'repeat' ? 'repeat' : a?.source === 'none' && b?.source === 'none' ? 'none' : 'row';
  return { value, halfWidth95: Math.hypot((1 - t) * ha, t * hb), source };
}

/** The words a verdict line ends with when its gap is within noise. */
export function noiseText(j: Extract<Judgement, { kind: 'noise' }>, a: number): string {
  const pct = a !== 0 ? ` (±${((100 * j.bound) / Math.abs(a)).toFixed(1)}% at 95%` : ' (';
  const from = j.source === 'repeat' ? 'from the runs\' --repeat intervals' : "from each row's own spread, one run each";
  const next = j.source === 'repeat' ? 'more repeats would tell them apart' : 'run each with --repeat 3 (or more) to tell them apart';
  return `within run-to-run noise${pct}, ${from}): ${next}`;
}
