import { z } from 'zod';
import { sloSchema } from './stats.js';

// summary.json's `capacity` (a `--profile capacity` run): the search's answer (load/capacity.ts computes it).

/** One probe (one row of the run): its load and whether it met the SLO. */
export const capacityProbeSchema = z.object({
  /** Index of the row in `stages`. */
  stage: z.number(),
  /** req/s (rate axis: the target rate; the synchronous probe: its achieved rate) or streams. */
  load: z.number(),
  /** Percent of the probe's measured requests that met every SLO limit (failed and cut requests are misses). */
  attainment: z.number(),
  /** Requests the attainment was computed over. */
  requests: z.number(),
  errorShare: z.number(),
  /** This probe alone passed (the search decides on the monotone fit over all probes, `fittedPass`). */
  pass: z.boolean(),
  /** Set when the probe did not keep up with its rate (its queue grew): why. */
  overSaturated: z.string().optional(),
  /** The probe was stopped early as over-saturated (a confirmed growing queue), not only short of the keep-up test. */
  earlyStop: z.boolean().optional(),
  /** Open loop: requests sent and completed inside the probe's window, pooled over runs of one load for keep-up. */
  sends: z.number().optional(),
  completions: z.number().optional(),
});
export type CapacityProbe = z.output<typeof capacityProbeSchema>;

/** A failure below a load that held, left after both were run again (CapacityResult.unsettled). */
export const capacityContradictionSchema = z.object({
  /** The load that failed, its runs, and why it failed (pooled over its runs). */
  failed: z.number(),
  failedRuns: z.number(),
  why: z.string(),
  /** The highest load that held (pooled over its runs), above the failure. */
  held: z.number(),
  heldRuns: z.number(),
});
export type CapacityContradiction = z.output<typeof capacityContradictionSchema>;

/** How far runs of the same load agreed (CapacityResult.reproducibility; only where a load was run more than once). */
export const capacityReproducibilitySchema = z.object({
  /** Loads run more than once. */
  repeatedLoads: z.number(),
  /** Of those, loads whose runs all reached the same pass/fail. */
  agreed: z.number(),
  /** Each repeated load: its runs' outcomes in run order ('pass', 'fail', or 'fail: did not keep up'). */
  loads: z.array(z.object({ load: z.number(), outcomes: z.array(z.string()) })),
  /** The sentence printed under the table. */
  text: z.string(),
});
export type CapacityReproducibility = z.output<typeof capacityReproducibilitySchema>;

/** The search's answer, kept in summary.json as `capacity`. */
export const capacitySchema = z.object({
  axis: z.enum(['rate', 'concurrency']),
  unit: z.enum(['req/s', 'streams']),
  /** Highest load that met the SLO (monotone fit over every probe); null when even the lowest load failed. */
  feasibleMax: z.number().nullable(),
  /** Lowest load above feasibleMax that failed; null when no load failed (the search hit its ceiling). */
  firstBreach: z.number().nullable(),
  /** Relative precision (rate axis) or streams (concurrency axis) the search stopped at. */
  precision: z.number(),
  /** Target attainment, percent. */
  attainment: z.number(),
  maxErrorShare: z.number(),
  slo: sloSchema,
  /** Every probe, ordered by load (ties in run order). */
  probes: z.array(capacityProbeSchema),
  /**
   * One point per distinct load, ordered by load: the attainment and error share as a monotone (isotonic) fit over
   * the loads, and the load's pass/fail from its own runs pooled. `setAside`: a failure below a load that held,
   * unresolved by re-runs (listed in `unsettled`), left out of the fit.
   */
  fitted: z
    .array(z.object({ load: z.number(), attainment: z.number(), errorShare: z.number(), pass: z.boolean(), runs: z.number(), setAside: z.boolean().optional() }))
    .default([]),
  /** The one-line answer printed under the table. */
  verdict: z.string().default(''),
  /** Why the search ended where it did when it did not converge (probe limit, interrupted, no pass at all). */
  note: z.string().optional(),
  /**
   * What `precision` is: the search's step (bisection stopped when the first failure lay within it of the highest
   * pass), not the answer's error — how far the answer moves between runs is `reproducibility`.
   */
  precisionMeaning: z.string().optional(),
  /** False when a failure below a load that held was still there after both were run again (see `unsettled`). */
  settled: z.boolean().optional(),
  /** The failures below a held load that re-runs did not resolve: set aside, and said in the verdict. */
  unsettled: z.array(capacityContradictionSchema).optional(),
  /** Where the search ran a load more than once: whether those runs agreed. */
  reproducibility: capacityReproducibilitySchema.optional(),
  /**
   * `predict --profile capacity`: the capacity's interval at `level` percent — the same search with the engine's time
   * at the ends of the ITL interval under load (null: no load met the SLO at that end). docs/accuracy.md.
   */
  interval: z
    .object({ low: z.number().nullable(), high: z.number().nullable(), level: z.number(), timeScales: z.object({ slow: z.number(), fast: z.number() }).optional(), source: z.string().optional() })
    .optional(),
});
export type CapacityResult = z.output<typeof capacitySchema>;
