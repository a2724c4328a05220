/**
 * `predict` rows: a figure with its prediction interval, `52.30 (44.10–63.00)`. The interval is kept on the means
 * (summary.json `predictionIntervals`); percentile columns carry none (the held-out residuals are of means).
 */
import type { StageSummary } from '../results/index.js';

type Field = 'ttftMs' | 'itlMs' | 'e2eMs' | 'requestThroughput' | 'outputTokenThroughput';

/** The `--repeat` interval keys (metrics/repeats.ts) and percentile keys, to the interval they read. */
const FIELD_OF: Record<string, Field> = {
  ttftMean: 'ttftMs', ttftP99: 'ttftMs', itlMean: 'itlMs', itlP99: 'itlMs', e2eMean: 'e2eMs', e2eP99: 'e2eMs',
  requestThroughput: 'requestThroughput', outputTokenThroughput: 'outputTokenThroughput',
  ttft: 'ttftMs', itl: 'itlMs', e2e: 'e2eMs',
};

const centre = (s: StageSummary, f: Field): number | undefined =>
  f === 'requestThroughput' ? s.requestThroughput : f === 'outputTokenThroughput' ? s.outputTokenThroughput : s.metrics[f]?.mean;

/** The interval's factors (low/figure, high/figure) for a column key, when the row is a prediction that has one. */
export function predictionFactors(s: StageSummary, key: string): { low: number; high: number } | undefined {
  const field = FIELD_OF[key];
  const range = field ? s.predictionIntervals?.[field] : undefined;
  const c = field ? centre(s, field) : undefined;
  if (!range || c === undefined || !(c > 0)) return undefined;
  return { low: range.low / c, high: range.high / c };
}

const num = (n: number): string => n.toFixed(2);

/** `value (low–high)` with the unit after, or undefined when the row has no interval for that key. */
export function withPrediction(s: StageSummary, key: string, value: number | undefined, unit = ''): string | undefined {
  const f = predictionFactors(s, key);
  if (!f || value === undefined || !Number.isFinite(value)) return undefined;
  return `${num(value)} (${num(value * f.low)}–${num(value * f.high)})${unit}`;
}
