import { z } from 'zod';
import type { CapacityResult } from '../load/capacity-types.js';

// summary.json's `capacity` (a `--profile capacity` run) and the per-row fields the search reads. Without these
// in the store's schema, zod would strip them when `report`/`compare` read a saved run.

const slo = z.object({ ttftMs: z.number().optional(), itlMs: z.number().optional(), e2eMs: z.number().optional() });

/** StageSummary.sloAttainment. */
export const sloAttainmentSchema = z.object({ percent: z.number(), met: z.number(), of: z.number() });

const probe = z.object({
  stage: z.number(),
  load: z.number(),
  attainment: z.number(),
  requests: z.number(),
  errorShare: z.number(),
  pass: z.boolean(),
  overSaturated: z.string().optional(),
  earlyStop: z.boolean().optional(),
  sends: z.number().optional(),
  completions: z.number().optional(),
});

const fitted = z.object({ load: z.number(), attainment: z.number(), errorShare: z.number(), pass: z.boolean(), runs: z.number(), setAside: z.boolean().optional() });

const contradiction = z.object({ failed: z.number(), failedRuns: z.number(), why: z.string(), held: z.number(), heldRuns: z.number() });

const reproducibility = z.object({
  repeatedLoads: z.number(),
  agreed: z.number(),
  loads: z.array(z.object({ load: z.number(), outcomes: z.array(z.string()) })),
  text: z.string(),
});

export const capacitySchema = z.object({
  axis: z.enum(['rate', 'concurrency']),
  unit: z.enum(['req/s', 'streams']),
  feasibleMax: z.number().nullable(),
  firstBreach: z.number().nullable(),
  precision: z.number(),
  attainment: z.number(),
  maxErrorShare: z.number(),
  slo,
  probes: z.array(probe),
  fitted: z.array(fitted).default([]),
  verdict: z.string().default(''),
  note: z.string().optional(),
  precisionMeaning: z.string().optional(),
  settled: z.boolean().optional(),
  unsettled: z.array(contradiction).optional(),
  reproducibility: reproducibility.optional(),
});

// Compile-time proof that a parsed `capacity` is the type the reports take.
const _capacityFits = (c: z.infer<typeof capacitySchema>): CapacityResult => c;
void _capacityFits;
