import type { Slo } from '../results/stats.js';
import type { ArrivalKind } from './types.js';

/** What `--profile capacity` searches, and what makes a probe pass. */
export interface CapacitySettings {
  /** `rate`: open loop at R req/s (arrivals from --arrival); `concurrency`: closed loop with N streams. */
  axis: 'rate' | 'concurrency';
  /** Per-request limits; a request meets the SLO when it meets every one given. */
  slo: Slo;
  /** Percent of a probe's requests (failed and cut ones count as misses) that must meet the SLO, e.g. 99. */
  attainment: number;
  /** Highest share (0–1) of failed requests among finished ones a passing probe may have. */
  maxErrorShare: number;
  /** Rate axis: stop when the gap between the last pass and the first failure is within this share of the pass (0.05). */
  precision: number;
  /** Most runs of one load: a probe whose attainment is within noise of the target is run again up to this many times. */
  repeats: number;
  arrival: ArrivalKind;
  /** Gamma arrivals: the shape (1 = Poisson). */
  burstiness?: number;
  /**
   * The probes run in virtual time (predict, plan): no client or host noise, so a probe that failed only on keeping
   * up is not run again — its queue grew on the simulated engine itself.
   */
  virtualTime?: boolean;
}

// The search's answer is part of summary.json: its types are the results schema's (src/results/capacity.ts).
export type { CapacityContradiction, CapacityProbe, CapacityReproducibility, CapacityResult } from '../results/capacity.js';
