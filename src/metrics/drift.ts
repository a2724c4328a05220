import type { StageAccumulator } from './accumulator.js';
import { sentRequestLatencies } from './window-figures.js';

/** A row is not steady when its first and last quarters' medians differ by more than this factor ... */
export const DRIFT_FACTOR = 3;
/** ... and each quarter holds at least this many successful requests ... */
const MIN_PER_QUARTER = 2;
/**
 * ... and the figure follows send order through the whole row (|Spearman ρ| at least this): a closed loop with more
 * streams than the server has slots answers half its requests at once and queues the others all through the row,
 * so two quarters of two requests each can land in different modes by chance — without any trend.
 */
const MIN_TREND = 0.6;

/** Spearman's rank correlation of the values with their order (ties take their mean rank). */
function trend(values: readonly number[]): number {
  const n = values.length;
  const order = values.map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0]);
  const rank = new Array<number>(n);
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && order[j + 1]?.[0] === order[i]?.[0]) j++;
    for (let k = i; k <= j; k++) rank[(order[k] as readonly [number, number])[1]] = (i + j) / 2;
    i = j + 1;
  }
  const d2 = rank.reduce((a, r, i) => a + (r - i) ** 2, 0);
  return n > 1 ? 1 - (6 * d2) / (n * (n * n - 1)) : 0;
}

const quantile = (sorted: readonly number[], q: number): number => {
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return (sorted[lo] as number) + ((sorted[hi] as number) - (sorted[lo] as number)) * (pos - lo);
};

/**
 * Whether the server changed speed within a row: the successful requests sent inside the window, in send order,
 * split into quarters; when the first and the last quarter's median time to first token (or mean inter-token
 * latency per request) differ by more than DRIFT_FACTOR, and beyond noise — the slower quarter's 25th percentile
 * above the faster quarter's 75th — the row's figures average two different states (a server slowed down by
 * another job, then recovered) and describe neither. Overloaded rows, whose queue grows by design, are marked `*`
 * already; this catches rows that kept up with their load while the server itself changed.
 */
export function driftWarning(acc: StageAccumulator, fromMs: number, toMs: number): string | undefined {
  const rows = sentRequestLatencies(acc, fromMs, toMs);
  const q = Math.floor(rows.length / 4);
  if (q < MIN_PER_QUARTER) return undefined;
  rows.sort((a, b) => a.sent - b.sent);
  const early = rows.slice(0, q);
  const late = rows.slice(rows.length - q);
  const compare = (name: string, pick: (r: (typeof rows)[number]) => number): string | undefined => {
    const a = early.map(pick).filter(Number.isFinite).sort((x, y) => x - y);
    const b = late.map(pick).filter(Number.isFinite).sort((x, y) => x - y);
    if (a.length < MIN_PER_QUARTER || b.length < MIN_PER_QUARTER) return undefined;
    const [ma, mb] = [quantile(a, 0.5), quantile(b, 0.5)];
    if (!(ma > 0 && mb > 0)) return undefined;
    const [slow, fast] = ma > mb ? [a, b] : [b, a];
    if (Math.max(ma, mb) / Math.min(ma, mb) <= DRIFT_FACTOR || quantile(slow, 0.25) <= quantile(fast, 0.75)) return undefined;
    const all = rows.map(pick).filter(Number.isFinite);
    if (Math.abs(trend(all)) < MIN_TREND) return undefined;
    return `median ${name} ${ma.toFixed(ma < 100 ? 1 : 0)} ms in its first quarter of requests against ${mb.toFixed(mb < 100 ? 1 : 0)} ms in its last`;
  };
  const found = [compare('TTFT', (r) => r.ttft), compare('ITL', (r) => r.itl)].filter((x): x is string => x !== undefined);
  if (found.length === 0) return undefined;
  return `latency changed within the row (${found.join('; ')}, ${q} requests each): not a steady state, its figures average two — rerun it (another job slowing the server, or a load at the edge of capacity whose queue came and went)`;
}
