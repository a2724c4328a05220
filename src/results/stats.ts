import { z } from 'zod';

/** A figure that may be NaN (unmeasured): JSON has no NaN, so it is written as null and read back as NaN. */
export const figure = z.number().nullable().transform((v) => v ?? Number.NaN);

/** One distribution's summary (design.md §2: mean/median/p90/p95/p99/min/max/stddev). */
export const statsSchema = z.object({
  count: z.number(),
  mean: figure,
  median: figure,
  p90: figure,
  p95: figure,
  p99: figure,
  min: figure,
  max: figure,
  stddev: figure.default(Number.NaN),
});
export type Stats = z.output<typeof statsSchema>;

/** Service-level objectives: a request is "good" when it meets every one given (ms). */
export const sloSchema = z.object({ ttftMs: z.number().optional(), itlMs: z.number().optional(), e2eMs: z.number().optional() });
export type Slo = z.output<typeof sloSchema>;
