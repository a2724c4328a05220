import type { Slo } from '../metrics/summary.js';
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

/** One probe (one row of the run): its load and whether it met the SLO. */
export interface CapacityProbe {
  /** Index of the row in `stages`. */
  stage: number;
  /** req/s (rate axis: the target rate; the synchronous probe: its achieved rate) or streams. */
  load: number;
  /** Percent of the probe's measured requests that met every SLO limit (failed and cut requests are misses). */
  attainment: number;
  /** Requests the attainment was computed over. */
  requests: number;
  errorShare: number;
  /** This probe alone passed (the search decides on the monotone fit over all probes, `fittedPass`). */
  pass: boolean;
  /** Set when the probe did not keep up with its rate (its queue grew): why. */
  overSaturated?: string;
  /** The probe was stopped early as over-saturated (a confirmed growing queue), not only short of the keep-up test. */
  earlyStop?: boolean;
  /** Open loop: requests sent and completed inside the probe's window, pooled over runs of one load for keep-up. */
  sends?: number;
  completions?: number;
}

/** A failure below a load that held, left after both were run again (CapacityResult.unsettled). */
export interface CapacityContradiction {
  /** The load that failed, its runs, and why it failed (pooled over its runs). */
  failed: number;
  failedRuns: number;
  why: string;
  /** The highest load that held (pooled over its runs), above the failure. */
  held: number;
  heldRuns: number;
}

/** How far runs of the same load agreed (CapacityResult.reproducibility; only where a load was run more than once). */
export interface CapacityReproducibility {
  /** Loads run more than once. */
  repeatedLoads: number;
  /** Of those, loads whose runs all reached the same pass/fail. */
  agreed: number;
  /** Each repeated load: its runs' outcomes in run order ('pass', 'fail', or 'fail: did not keep up'). */
  loads: Array<{ load: number; outcomes: string[] }>;
  /** The sentence printed under the table. */
  text: string;
}

/** The search's answer, kept in summary.json as `capacity`. */
export interface CapacityResult {
  axis: 'rate' | 'concurrency';
  unit: 'req/s' | 'streams';
  /** Highest load that met the SLO (monotone fit over every probe); null when even the lowest load failed. */
  feasibleMax: number | null;
  /** Lowest load above feasibleMax that failed; null when no load failed (the search hit its ceiling). */
  firstBreach: number | null;
  /** Relative precision (rate axis) or streams (concurrency axis) the search stopped at. */
  precision: number;
  /** Target attainment, percent. */
  attainment: number;
  maxErrorShare: number;
  slo: Slo;
  /** Every probe, ordered by load (ties in run order). */
  probes: CapacityProbe[];
  /**
   * One point per distinct load, ordered by load: the attainment and error share as a monotone (isotonic) fit over
   * the loads, and the load's pass/fail from its own runs pooled. `setAside`: a failure below a load that held,
   * unresolved by re-runs (listed in `unsettled`), left out of the fit.
   */
  fitted: Array<{ load: number; attainment: number; errorShare: number; pass: boolean; runs: number; setAside?: boolean }>;
  /** The one-line answer printed under the table. */
  verdict: string;
  /** Why the search ended where it did when it did not converge (probe limit, interrupted, no pass at all). */
  note?: string;
  /**
   * What `precision` is: the search's step (bisection stopped when the first failure lay within it of the highest
   * pass), not the answer's error — how far the answer moves between runs is `reproducibility`.
   */
  precisionMeaning?: string;
  /** False when a failure below a load that held was still there after both were run again (see `unsettled`). */
  settled?: boolean;
  /** The failures below a held load that re-runs did not resolve: set aside, and said in the verdict. */
  unsettled?: CapacityContradiction[];
  /** Where the search ran a load more than once: whether those runs agreed. */
  reproducibility?: CapacityReproducibility;
}
