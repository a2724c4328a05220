/**
 * How sure a calibration from measured runs is: per figure (TTFT, ITL, e2e, req/s, output tok/s) the spread of the
 * fitted prediction's log-errors on the runs, and the standard error that the fitted constants themselves carry,
 * propagated through a numerical Jacobian (Cov(θ) = s²(JᵀJ)⁻¹ in log space). predict-intervals.ts turns them into
 * intervals: e^(−bias ± t·√(max(sd, noise)²(1 + 1/n) + se²)), `noise` being what a new row cannot be predicted better
 * than: its own sampling error and the runs' disagreement (rowNoise, runSpread).
 */
import type { SimEngineOptions } from '../create.js';
import { runParams } from './run-fit.js';
import type { StageSummary } from '../../metrics/summary.js';
import type { MeasuredRow, MeasuredRun } from './run-rows.js';
import { FIT_METRICS, type FitMetricKey, predictRows, scorePoints, type ScoredPoint } from './run-score.js';
import type { CalibratedSpread, CalibratedSpreads, Calibration } from './types.js';

/** Step of the Jacobian, in log space (5%: well above the simulator's rounding, small next to the constants' range). */
const JACOBIAN_STEP = 0.05;

const informative = (pts: readonly ScoredPoint[]): ScoredPoint[] => pts.filter((p) => !p.setByLoad && Number.isFinite(p.predicted) && p.predicted > 0);
const residual = (p: ScoredPoint): number => Math.log(p.predicted / p.measured);
const key = (p: ScoredPoint, i: number): string => `${i}\u0000${p.row}\u0000${p.metric}`;

/** A median's standard error over a mean's, for a normal spread (√(π/2)). */
const MEDIAN_SE = 1.2533;

/**
 * One measured row's sampling error of a figure, relative (≈ its log-error): a median's or mean's per-request
 * spread over √requests. A rate the fit sees comes from a closed loop (an open loop's is set by its load), where
 * throughput = streams ÷ mean latency (Little's law): it takes the mean e2e's error.
 */
export function rowNoise(s: StageSummary, metric: FitMetricKey): number | undefined {
  const stats = metric === 'ttft' ? s.metrics.ttftMs : metric === 'itl' ? s.metrics.itlMs : s.metrics.e2eMs;
  if (stats === undefined) return undefined;
  // ITL and the rates rest on a mean; TTFT and e2e are medians.
  const ofMean = metric !== 'ttft' && metric !== 'e2e';
  const centre = ofMean ? stats.mean : stats.median;
  if (!(stats.count > 1) || !(centre > 0) || !Number.isFinite(stats.stddev)) return undefined;
  return ((ofMean ? 1 : MEDIAN_SE) * stats.stddev) / centre / Math.sqrt(stats.count);
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Standard deviation of the runs' mean log-errors (0 with one run): how far apart separate runs of one server sit. */
function runSpread(residuals: ReadonlyArray<{ r: number; run: number }>): number {
  const byRun = new Map<number, number[]>();
  for (const { r, run } of residuals) byRun.set(run, [...(byRun.get(run) ?? []), r]);
  if (byRun.size < 2) return 0;
  const means = [...byRun.values()].map(mean);
  const m = mean(means);
  return Math.sqrt(means.reduce((a, x) => a + (x - m) ** 2, 0) / (means.length - 1));
}

/** Solves (A + εI)x = b for a small symmetric matrix (Gauss-Jordan); ε keeps constants the figures do not inform harmless. */
function invert(a: number[][]): number[][] {
  const n = a.length;
  const trace = a.reduce((s, r, i) => s + (r[i] as number), 0);
  const eps = Math.max(1e-12, (trace / Math.max(1, n)) * 1e-6);
  const m = a.map((r, i) => [...r.map((v, j) => v + (i === j ? eps : 0)), ...a.map((_, j) => (i === j ? 1 : 0))]);
  for (let c = 0; c < n; c++) {
    let piv = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r]?.[c] as number) > Math.abs(m[piv]?.[c] as number)) piv = r;
    [m[c], m[piv]] = [m[piv] as number[], m[c] as number[]];
    const row = m[c] as number[];
    const d = row[c] as number;
    for (let j = 0; j < 2 * n; j++) row[j] = (row[j] as number) / d;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r]?.[c] as number;
      const rr = m[r] as number[];
      for (let j = 0; j < 2 * n; j++) rr[j] = (rr[j] as number) - f * (row[j] as number);
    }
  }
  return m.map((r) => r.slice(n));
}

/** The spreads of a calibration fitted to `run` (several runs merged), at the fitted constants `cal`. */
export function calibrationSpreads(run: MeasuredRun, engine: SimEngineOptions, cal: Calibration): CalibratedSpreads {
  const at = structuredClone(cal);
  const { params } = runParams(engine, at);
  const base = informative(scorePoints(run, predictRows(run, { ...engine, calibration: at })));
  const r0 = new Map(base.map((p, i) => [key(p, i), residual(p)]));
  // Jacobian of every residual on each constant's log.
  const J: number[][] = base.map(() => []);
  for (const p of params) {
    const c = structuredClone(at);
    const v = p.get(c);
    const h = v * Math.exp(JACOBIAN_STEP) <= p.hi ? JACOBIAN_STEP : -JACOBIAN_STEP;
    p.set(c, v * Math.exp(h));
    const moved = scorePoints(run, predictRows(run, { ...engine, calibration: c }));
    const byKey = new Map(informative(moved).map((q) => [`${q.row}\u0000${q.metric}`, q]));
    base.forEach((b, i) => {
      const q = byKey.get(`${b.row}\u0000${b.metric}`);
      J[i]?.push(q ? (residual(q) - (r0.get(key(b, i)) as number)) / h : 0);
    });
  }
  const N = base.length;
  const P = params.length;
  const rs = base.map(residual);
  const s2 = rs.reduce((a, r) => a + r * r, 0) / Math.max(1, N - P);
  const JtJ = params.map((_, a) => params.map((__, b) => J.reduce((s, row) => s + (row[a] as number) * (row[b] as number), 0)));
  const cov = invert(JtJ).map((row) => row.map((v) => v * s2));
  const predVar = J.map((row) => row.reduce((s, ja, a) => s + ja * row.reduce((t, jb, b) => t + (cov[a]?.[b] as number) * jb, 0), 0));
  // The fitted constants took P degrees of freedom out of N figures: the spread is scaled back up by √(N/(N−P)).
  const dof = N > P ? Math.sqrt(N / (N - P)) : 2;
  // Per figure: its row's own sampling error and which run the row came from.
  const rowOf = new Map<string, MeasuredRow>(run.rows.map((r) => [r.label, r]));
  const rowsOf = base.map((p) => rowOf.get(p.row));
  const sampling = base.map((p, i) => {
    const row = rowsOf[i];
    return row ? rowNoise(row.measured, p.metric) : undefined;
  });
  const spread = (idx: number[]): CalibratedSpread | undefined => {
    if (idx.length < 2) return undefined;
    const xs = idx.map((i) => rs[i] as number);
    const bias = mean(xs);
    const sd = Math.sqrt(xs.reduce((a, x) => a + (x - bias) ** 2, 0) / (xs.length - 1)) * dof;
    const se = Math.sqrt(idx.reduce((a, i) => a + Math.max(0, predVar[i] as number), 0) / idx.length);
    // The typical row's own sampling error (root mean square over the figures), and the runs' disagreement.
    const own = idx.map((i) => sampling[i]).filter((x): x is number => x !== undefined && Number.isFinite(x));
    const between = runSpread(idx.map((i) => ({ r: rs[i] as number, run: rowsOf[i]?.runIndex ?? 0 })));
    const noise = Math.sqrt((own.length ? mean(own.map((x) => x * x)) : 0) + between ** 2);
    return { bias, sd, se, n: xs.length, ...(noise > 0 ? { noise } : {}) };
  };
  const out: CalibratedSpreads = {};
  for (const m of FIT_METRICS) {
    const s = spread(base.map((p, i) => (p.metric === m.key ? i : -1)).filter((i) => i >= 0));
    if (s) out[m.key as FitMetricKey] = s;
  }
  const all = spread(base.map((_, i) => i));
  if (all) out.all = { ...all, bias: 0 };
  return out;
}
