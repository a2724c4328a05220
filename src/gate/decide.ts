import { Rng } from '../core/rng.js';
import { observed, prepareSide, resample, statistic, unitBaselines } from './bootstrap.js';
import { sideRunNoise, widen, type RunNoise } from './run-noise.js';
import { requestCount, type RowSide } from './samples.js';
import { higherIsWorse, thresholdText, type GateMetric, type Threshold } from './thresholds.js';

export type GateVerdict = 'pass' | 'fail' | 'inconclusive';

/**
 * One metric of one row: the change from baseline to candidate with its 95% interval, against its threshold.
 * `change` is candidate/baseline − 1 (a ratio), or for the error share candidate − baseline (a difference of shares).
 */
export interface GateCheck {
  metric: string;
  row: string;
  threshold: string;
  /** The tolerated change in the bad direction (0.1 = 10%, or 1 percentage point as 0.01 for errors). */
  limit: number;
  baseline: number;
  candidate: number;
  change: number;
  low: number;
  high: number;
  verdict: GateVerdict;
  /** The whole interval is better than no change by more than the threshold: an improvement. */
  improved: boolean;
  /** Inconclusive: how much more evidence would decide it. */
  needs?: string;
  /** What the interval was computed from. */
  evidence: string;
  /**
   * The run-to-run variation the interval was widened by, per side (run-noise.ts): 1 sd of ln(figure) for one run,
   * and whether the prior, the runs' own drift or their repeats set it. Absent for the error share and open-loop
   * throughputs.
   */
  runToRun?: { baseline: RunToRunSide; candidate: RunToRunSide };
}

/** One side's run-to-run variation: 1 sd of ln(figure) a run, what set it, and the side's runs (or repeats). */
export type RunToRunSide = Pick<RunNoise, 'sd' | 'from'> & { runs: number };

/** Resamples per decision: the interval's ends are the 2.5th and 97.5th of these. */
export const RESAMPLES = 2000;
const LEVEL = 0.95;

/** pass / fail / inconclusive of an interval of the change, read in the bad direction, against the limit. */
export function classify(metric: GateMetric, change: number, low: number, high: number, limit: number): Pick<GateCheck, 'verdict' | 'improved'> & { badLow: number; badHigh: number; bad: number } {
  const up = higherIsWorse(metric);
  const bad = up ? change : -change;
  const badLow = up ? low : -high;
  const badHigh = up ? high : -low;
  const verdict: GateVerdict = badLow > limit ? 'fail' : badHigh <= limit ? 'pass' : 'inconclusive';
  return { verdict, improved: badHigh < -limit, badLow, badHigh, bad };
}

/** What an inconclusive check was decided from: requests (the smaller side), runs per side, and what dominated. */
export interface NeedsEvidence {
  requests: number;
  baselineRuns: number;
  candidateRuns: number;
  /** Run-to-run variation (the prior, drift or repeats) is at least half of the interval's variance. */
  runLevel?: boolean;
}

/**
 * For an interval that straddles the limit: its half-width on the side facing the limit shrinks as 1/√n, so it
 * clears the limit with (half-width / distance)² times the evidence. Runs when a side has several (their spread is
 * then the noise that counts) or when run-to-run variation dominates the interval (more requests would not narrow
 * it), else measured requests. With k_b and k_c runs the run-level variance goes as 1/k_b + 1/k_c, so K runs on
 * each side give it 2/K.
 */
export function needsText(c: { bad: number; badLow: number; badHigh: number; limit: number }, evidence: NeedsEvidence): string {
  const distance = Math.abs(c.bad - c.limit);
  const halfWidth = c.bad > c.limit ? c.bad - c.badLow : c.badHigh - c.bad;
  const factor = distance > 0 ? (halfWidth / distance) ** 2 : Number.POSITIVE_INFINITY;
  if (!Number.isFinite(factor) || factor > 100) {
    return 'the change sits at the threshold: more than 100× the evidence would be needed to tell (keep the threshold, or judge by eye)';
  }
  const kb = evidence.baselineRuns;
  const kc = evidence.candidateRuns;
  if (kb > 1 || kc > 1 || evidence.runLevel === true) {
    const want = Math.max(Math.max(kb, kc) + 1, Math.ceil((2 * factor) / (1 / kb + 1 / kc) - 1e-9));
    const now = kb === kc ? `now ${kb}` : `now ${kb} baseline, ${kc} candidate`;
    return `about ${want} runs per side (${now}) would decide it`;
  }
  const want = Math.max(evidence.requests + 1, Math.ceil(evidence.requests * factor - 1e-9));
  return `about ${want} measured requests per side (now ${evidence.requests}; ×${factor.toFixed(1)}: raise --max-requests or --max-seconds), or repeats, would decide it`;
}

function quantileOf(sorted: Float64Array, q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return (sorted[lo] as number) + ((sorted[hi] as number) - (sorted[lo] as number)) * (pos - lo);
}

/** Every row metric of one matched row, from one shared set of resamples (seeded: the same runs give the same verdict). */
export function decideRow(base: RowSide, cand: RowSide, thresholds: readonly Threshold[], seed: number): { checks: GateCheck[]; skipped: string[] } {
  const metrics = thresholds.filter((t) => t.metric.kind !== 'capacity');
  const b = prepareSide(base);
  const c = prepareSide(cand);
  const bObs = observed(b);
  const cObs = observed(c);
  const skipped: string[] = [];
  const live = metrics.filter((t) => {
    const bv = statistic(b, bObs, t.metric);
    const cv = statistic(c, cObs, t.metric);
    const usable = Number.isFinite(bv) && Number.isFinite(cv) && (t.metric.kind === 'errors' || bv > 0);
    if (!usable) skipped.push(`${t.metric.id} of ${base.label}: not measured on both sides`);
    return usable;
  });
  const draws = live.map(() => new Float64Array(RESAMPLES));
  const rng = new Rng(seed);
  const bUnits = unitBaselines(b);
  const cUnits = unitBaselines(c);
  for (let i = 0; i < RESAMPLES; i++) {
    const rb = resample(b, bUnits, rng);
    const rc = resample(c, cUnits, rng);
    live.forEach((t, m) => {
      const bv = statistic(b, rb, t.metric);
      const cv = statistic(c, rc, t.metric);
      (draws[m] as Float64Array)[i] = t.metric.kind === 'errors' ? cv - bv : cv / bv - 1;
    });
  }
  const requests = Math.min(requestCount(base), requestCount(cand));
  const runs = Math.max(base.units.length, cand.units.length);
  const evidence = `${requestCount(base)} vs ${requestCount(cand)} requests, ${base.units.length} vs ${cand.units.length} run${runs === 1 ? '' : 's'}`;
  const checks = live.map((t, m) => {
    const sorted = (draws[m] as Float64Array).filter(Number.isFinite).sort();
    const bv = statistic(b, bObs, t.metric);
    const cv = statistic(c, cObs, t.metric);
    const change = t.metric.kind === 'errors' ? cv - bv : cv / bv - 1;
    const bootLow = sorted.length ? quantileOf(sorted, (1 - LEVEL) / 2) : Number.NaN;
    const bootHigh = sorted.length ? quantileOf(sorted, 1 - (1 - LEVEL) / 2) : Number.NaN;
    // Run-to-run variation, which the requests of one run cannot show (run-noise.ts).
    const bn = sideRunNoise(b, t.metric);
    const cn = sideRunNoise(c, t.metric);
    const extra = (bn?.extraVariance ?? 0) + (cn?.extraVariance ?? 0);
    const { low, high } = widen(change, bootLow, bootHigh, extra);
    const k = classify(t.metric, change, low, high, t.limit);
    const check: GateCheck = {
      metric: t.metric.id,
      row: base.label,
      threshold: thresholdText(t),
      limit: t.limit,
      baseline: bv,
      candidate: cv,
      change,
      low,
      high,
      verdict: k.verdict,
      improved: k.improved,
      evidence,
      ...(bn && cn ? { runToRun: { baseline: { sd: bn.sd, from: bn.from, runs: base.units.length }, candidate: { sd: cn.sd, from: cn.from, runs: cand.units.length } } } : {}),
    };
    if (k.verdict === 'inconclusive') {
      // The bootstrap's own variance of ln ratio, from its 95% interval, against the run-level variance added to it.
      const bootVar = bootHigh > -1 && bootLow > -1 ? ((Math.log1p(bootHigh) - Math.log1p(bootLow)) / (2 * 1.96)) ** 2 : 0;
      const runLevel = extra > 0 && extra >= bootVar;
      check.needs = needsText({ ...k, limit: t.limit }, { requests, baselineRuns: base.units.length, candidateRuns: cand.units.length, runLevel });
    }
    return check;
  });
  return { checks, skipped };
}
