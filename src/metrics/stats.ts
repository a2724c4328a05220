import type { Stats } from '../results/stats.js';

export type { Stats };

export function computeStats(values: ArrayLike<number>): Stats | undefined {
  const n = values.length;
  if (n === 0) return undefined;
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  const mean = sum / n;
  let sq = 0;
  for (const v of sorted) sq += (v - mean) * (v - mean);
  return {
    count: n,
    mean,
    median: quantile(sorted, 0.5),
    p90: quantile(sorted, 0.9),
    p95: quantile(sorted, 0.95),
    p99: quantile(sorted, 0.99),
    min: sorted[0] as number,
    max: sorted[n - 1] as number,
    stddev: Math.sqrt(sq / n),
  };
}

/** q in [0,1] over an ascending array. */
export function quantile(sorted: Float64Array, q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (pos - lo);
}
