/**
 * Intervals on predicted figures (predict rows, capacity answers, plan capacities): from the leave-one-table-out
 * residuals of the shipped constants and their calibration (interval-data.ts; intervals.ts and
 * interval-calibration.ts), widened to the out-of-family residuals when the deployment's GPU, engine, model family or
 * quantization has no published table; or, after `--calibrate-from`, from the calibration's own residuals and the
 * fitted constants' standard error (run-intervals.ts).
 */
import type { PredictionIntervals, StageSummary } from '../../results/index.js';
import { resolveSimEngine, type SimEngineOptions } from '../create.js';
import { INTERVAL_DATA } from './interval-data.js';
import { DIMENSIONS, type Dimension, type IntervalFactors, intervalFactors, type IntervalFamily, type LoadRegime, modelFamily, quantClass, type ResidualModel } from './intervals.js';
import type { FitMetricKey } from './run-score.js';
import type { CalibratedSpreads } from './types.js';

/** Default `--interval-level`, percent. */
export const DEFAULT_INTERVAL_LEVEL = 80;

export type { CalibratedSpread, CalibratedSpreads } from './types.js';

/** What an interval is built from: the published residuals for a deployment, or a calibration's spread. */
export type IntervalBasis =
  | { kind: 'published'; level: number; unseen: Dimension[]; model: ResidualModel }
  | { kind: 'calibration'; level: number; spreads: CalibratedSpreads };

/** The deployment's place in the data: which of its dimensions no published table covers. */
export function unseenDimensions(engine: SimEngineOptions, model: ResidualModel = INTERVAL_DATA.model): { unseen: Dimension[]; deployment: Record<Dimension, string> } {
  const r = resolveSimEngine(engine);
  const deployment: Record<Dimension, string> = {
    gpu: r.hardware.name,
    engine: r.profile.calKey,
    family: modelFamily(r.model.name),
    quant: quantClass(r.description.quant),
  };
  return { unseen: DIMENSIONS.filter((d) => !(model.seen[d][deployment[d]] ?? 0)), deployment };
}

export function publishedBasis(engine: SimEngineOptions, levelPct: number): IntervalBasis {
  return { kind: 'published', level: levelPct / 100, unseen: unseenDimensions(engine).unseen, model: INTERVAL_DATA.model };
}

/** The calibration's fit for this very deployment, if it holds one (its spreads give the intervals). */
function ownCalibration(engine: SimEngineOptions): CalibratedSpreads | undefined {
  const ci = engine.calibration?.intervals;
  const same = ci && ci.deployment.engine === engine.engine && ci.deployment.model === engine.model
    && ci.deployment.gpu.toLowerCase() === engine.gpu.toLowerCase() && ci.deployment.gpus === engine.gpus;
  return ci && same ? ci.spreads : undefined;
}

/**
 * Why a prediction carries no interval although one was asked for: every published table measured GPUs, so their
 * residuals say nothing of a CPU (out of family they span 430× on ITL and more on TTFT: 1–443 ms around 7.7 ms).
 * Undefined where an interval can be built.
 */
export function noIntervalReason(engine: SimEngineOptions, levelPct: number): string | undefined {
  if (!(levelPct > 0) || ownCalibration(engine)) return undefined;
  const r = resolveSimEngine(engine);
  if (r.hardware.cpu === undefined) return undefined;
  return `no prediction intervals: every published table measured GPUs, so none describes the error on a CPU (${r.hardware.name}); --calibrate-from RUN[,RUN…] of this deployment gives intervals from its own runs`;
}

/** The calibration's own spread when it was fitted for this deployment, else the published tables' residuals (undefined: level 0, or none apply). */
export function intervalBasis(engine: SimEngineOptions, levelPct: number): IntervalBasis | undefined {
  if (!(levelPct > 0)) return undefined;
  const spreads = ownCalibration(engine);
  if (spreads) return { kind: 'calibration', level: levelPct / 100, spreads };
  if (noIntervalReason(engine, levelPct)) return undefined;
  return publishedBasis(engine, levelPct);
}

/** A row's load regime, as the residuals classify published rows (intervals.ts pointRegime). */
export function stageRegime(s: StageSummary): LoadRegime {
  if (s.kind === 'burst') return 'saturated';
  if (s.kind === 'closed') {
    const c = s.concurrency ?? 1;
    return c <= 4 ? 'low' : c >= 64 ? 'saturated' : 'loaded';
  }
  if (s.belowTarget) return 'saturated';
  return Number.isFinite(s.meanConcurrency) && s.meanConcurrency <= 4 ? 'low' : 'loaded';
}

const FIELDS = ['ttftMs', 'itlMs', 'e2eMs', 'outputTokenThroughput', 'requestThroughput'] as const;
type Field = (typeof FIELDS)[number];
const RUN_METRIC: Record<Field, FitMetricKey> = {
  ttftMs: 'ttft', itlMs: 'itl', e2eMs: 'e2e', outputTokenThroughput: 'outputTokenThroughput', requestThroughput: 'requestThroughput',
};

function familyOf(field: Field, regime: LoadRegime): IntervalFamily {
  if (field === 'ttftMs') return regime === 'low' ? 'ttft-low' : 'ttft';
  if (field === 'itlMs') return 'itl';
  if (field === 'e2eMs') return 'e2e';
  if (field === 'outputTokenThroughput') return regime === 'saturated' ? 'out-sat' : 'out';
  return 'reqs';
}

/** Two-sided Student-t quantile t((1+level)/2, df), by bisection on the t distribution's CDF. */
export function studentT(level: number, df: number): number {
  const p = (1 + level) / 2;
  if (!(df >= 1)) return Number.NaN;
  // CDF of t via the regularized incomplete beta, evaluated by its continued fraction (Numerical Recipes betacf).
  const cdf = (t: number): number => {
    const x = df / (df + t * t);
    const ib = incompleteBeta(x, df / 2, 0.5);
    return t >= 0 ? 1 - ib / 2 : ib / 2;
  };
  let lo = 0;
  let hi = 1000;
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    if (cdf(mid) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

function logGamma(x: number): number {
  const c = [76.18009172947146, -86.50532032941677, 24.01409824083091, -1.231739572450155, 0.1208650973866179e-2, -0.5395239384953e-5];
  let y = x;
  const tmp = x + 5.5 - (x + 0.5) * Math.log(x + 5.5);
  let ser = 1.000000000190015;
  for (const k of c) ser += k / ++y;
  return -tmp + Math.log((2.5066282746310005 * ser) / x);
}

function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  const cf = (xx: number, aa: number, bb: number): number => {
    let c = 1;
    let d = 1 - ((aa + bb) * xx) / (aa + 1);
    d = 1 / (Math.abs(d) < 1e-30 ? 1e-30 : d);
    let h = d;
    for (let m = 1; m <= 200; m++) {
      const m2 = 2 * m;
      let an = (m * (bb - m) * xx) / ((aa + m2 - 1) * (aa + m2));
      d = 1 / (Math.abs(1 + an * d) < 1e-30 ? 1e-30 : 1 + an * d);
      c = Math.abs(1 + an / c) < 1e-30 ? 1e-30 : 1 + an / c;
      h *= d * c;
      an = (-(aa + m) * (aa + bb + m) * xx) / ((aa + m2) * (aa + m2 + 1));
      d = 1 / (Math.abs(1 + an * d) < 1e-30 ? 1e-30 : 1 + an * d);
      c = Math.abs(1 + an / c) < 1e-30 ? 1e-30 : 1 + an / c;
      const del = d * c;
      h *= del;
      if (Math.abs(del - 1) < 1e-12) break;
    }
    return h;
  };
  return x < (a + 1) / (a + b + 2) ? (front * cf(x, a, b)) / a : 1 - (front * cf(1 - x, b, a)) / b;
}

const MIN_OWN_FIGURES = 3;

/**
 * Factors of a calibrated prediction: e^(−bias ± t·√(max(sd, noise)²(1 + 1/n) + se²)). The floor `noise` keeps a
 * fit that matched its few rows closely from promising more than a new row's own sampling error and the runs'
 * disagreement allow (a ±0.5% ITL interval, on a host whose load moves between runs).
 */
export function calibratedFactors(spreads: CalibratedSpreads, metric: FitMetricKey, level: number): IntervalFactors | undefined {
  // A figure the runs measured fewer than 3 times (Student's t of 1 degree of freedom is 12.7) takes the pooled spread.
  const own = spreads[metric];
  const s = own && own.n >= MIN_OWN_FIGURES ? own : spreads.all;
  if (!s || s.n < 2) return undefined;
  const spread = Math.max(s.sd, s.noise ?? 0);
  const half = studentT(level, s.n - 1) * Math.sqrt(spread ** 2 * (1 + 1 / s.n) + s.se ** 2);
  return { low: Math.exp(-s.bias - half), high: Math.exp(-s.bias + half), n: s.n, source: s === own ? `calibration ${metric}` : 'calibration (all figures)' };
}

/** The factors for one predicted figure. */
export function fieldFactors(basis: IntervalBasis, field: Field, regime: LoadRegime): IntervalFactors | undefined {
  if (basis.kind === 'calibration') return calibratedFactors(basis.spreads, RUN_METRIC[field], basis.level);
  return intervalFactors(basis.model, familyOf(field, regime), regime, basis.level, basis.unseen);
}

const pick: Record<Field, (s: StageSummary) => number | undefined> = {
  ttftMs: (s) => s.metrics.ttftMs?.mean,
  itlMs: (s) => s.metrics.itlMs?.mean,
  e2eMs: (s) => s.metrics.e2eMs?.mean,
  outputTokenThroughput: (s) => s.outputTokenThroughput,
  requestThroughput: (s) => s.requestThroughput,
};

/** A predicted row's intervals (on the means of its latencies and on its throughputs); undefined for a row with no success. */
export function stageIntervals(s: StageSummary, basis: IntervalBasis): PredictionIntervals | undefined {
  if (s.requests.ok === 0) return undefined;
  const regime = stageRegime(s);
  const out: PredictionIntervals = {
    level: Math.round(basis.level * 1000) / 10,
    basis: basis.kind,
    regime,
    ...(basis.kind === 'published' && basis.unseen.length ? { unseen: [...basis.unseen] } : {}),
  };
  for (const field of FIELDS) {
    const v = pick[field](s);
    const f = fieldFactors(basis, field, regime);
    if (v === undefined || !Number.isFinite(v) || !f) continue;
    out[field] = { low: v * f.low, high: v * f.high, source: f.source };
  }
  return out;
}

/**
 * Engine time scales whose capacity searches give a capacity interval's pessimistic and optimistic ends: the ends of
 * the ITL interval under load (a decode step as slow, or as fast, as the held-out figures say it may be).
 */
export function capacityTimeScales(basis: IntervalBasis): { slow: number; fast: number; source: string } | undefined {
  const f = fieldFactors(basis, 'itlMs', 'loaded');
  return f ? { slow: f.high, fast: f.low, source: f.source } : undefined;
}
