/**
 * How far the simulator is from a measured run: each on-curve row re-predicted at its own load, five figures per
 * row compared, the error summarised as the median |predicted/measured − 1| per figure, and overall as the worst of
 * those figures — never a median over all of them, which the throughput figures of open-loop rows (right by
 * construction: an open loop below capacity completes what it is sent) would pull down while TTFT is off by 98%.
 */
import { summarizeStage, type StageSummary } from '../../metrics/summary.js';
import { resolveSimEngine, type SimEngineOptions } from '../create.js';
import { runVirtualStage } from '../virtual-runner.js';
import type { MeasuredRun } from './run-rows.js';

/** The figures the fit and the error report compare, per row. */
export const FIT_METRICS = [
  { key: 'ttft', label: 'TTFT median', pick: (s: StageSummary) => s.metrics.ttftMs?.median },
  { key: 'itl', label: 'ITL mean', pick: (s: StageSummary) => s.metrics.itlMs?.mean },
  { key: 'e2e', label: 'e2e median', pick: (s: StageSummary) => s.metrics.e2eMs?.median },
  { key: 'requestThroughput', label: 'req/s', pick: (s: StageSummary) => s.requestThroughput },
  { key: 'outputTokenThroughput', label: 'output tok/s', pick: (s: StageSummary) => s.outputTokenThroughput },
] as const;

export type FitMetricKey = (typeof FIT_METRICS)[number]['key'];

/** One compared figure. `predicted` is NaN when the simulated row had no success. */
export interface ScoredPoint {
  row: string;
  metric: FitMetricKey;
  measured: number;
  predicted: number;
  /** req/s or output tok/s of an open-loop row that kept up: the load sets it, the prediction cannot miss it. */
  setByLoad?: boolean;
}

/** Median |predicted/measured − 1| in percent, per metric and overall; `loss` is the fit's Σ log². */
export interface ErrorReport {
  /**
   * setByLoad: every figure of this metric was set by the load (open-loop throughput); it does not count overall.
   * meanPct: the mean over the rows, which a median of a few rows can hide (rows +20%, +0.2%, +0.4%: median 0.4%).
   */
  perMetric: Partial<Record<FitMetricKey, { medianPct: number; meanPct: number; n: number; setByLoad?: boolean }>>;
  /** The worst per-metric median (the metrics the load does not set); the metric it is. */
  worstMetric?: FitMetricKey;
  overallPct: number;
  points: number;
  loss: number;
}

/** A prediction with no figure where the run measured one costs as much as being off by a factor e⁵. */
const MISSING_PENALTY = 25;

/** Re-predicts every on-curve row of the run at its own load, in virtual time. */
export function predictRows(run: MeasuredRun, engine: SimEngineOptions): StageSummary[] {
  const resolved = resolveSimEngine(engine);
  return run.rows.map((row) => {
    const { result } = runVirtualStage(resolved, row.spec, row.measured.index, row.firstRequestId, 0, row.seed);
    return summarizeStage(result);
  });
}

/** The figures of every row, measured beside predicted (only figures the run measured, > 0). */
export function scorePoints(run: MeasuredRun, predicted: readonly StageSummary[]): ScoredPoint[] {
  const out: ScoredPoint[] = [];
  run.rows.forEach((row, i) => {
    const p = predicted[i];
    // Only rows that kept up are fitted (run-rows.ts): an open loop's rates are its target's.
    const openLoop = row.measured.kind === 'open' && !row.measured.belowTarget;
    for (const m of FIT_METRICS) {
      const measured = m.pick(row.measured);
      if (measured === undefined || !(measured > 0) || !Number.isFinite(measured)) continue;
      const pv = p && p.requests.ok > 0 ? m.pick(p) : undefined;
      const setByLoad = openLoop && (m.key === 'requestThroughput' || m.key === 'outputTokenThroughput');
      out.push({ row: row.label, metric: m.key, measured, predicted: pv !== undefined && pv > 0 && Number.isFinite(pv) ? pv : Number.NaN, ...(setByLoad ? { setByLoad } : {}) });
    }
  });
  return out;
}

const logSquare = (p: ScoredPoint): number => (Number.isFinite(p.predicted) ? Math.log(p.predicted / p.measured) ** 2 : MISSING_PENALTY);

export function pointLoss(points: readonly ScoredPoint[]): number {
  return points.reduce((a, p) => a + logSquare(p), 0);
}

/**
 * What the run fit minimises: TTFT, ITL and the end-to-end figures weigh alike, each the mean log² of its figures.
 * e2e, req/s and output tok/s are one quantity seen three ways (a closed loop's rate is its streams over its mean
 * latency): counted as three figures beside one TTFT and one ITL, they outvoted ITL, and the fit traded ITL away to
 * move them.
 */
export function fitObjective(points: readonly ScoredPoint[]): number {
  const groups: ReadonlyArray<readonly FitMetricKey[]> = [['ttft'], ['itl'], ['e2e', 'requestThroughput', 'outputTokenThroughput']];
  return groups.reduce((sum, keys) => {
    const ls = points.filter((p) => keys.includes(p.metric)).map(logSquare);
    return sum + (ls.length ? ls.reduce((a, b) => a + b, 0) / ls.length : 0);
  }, 0);
}

/** A median error "worse" than another: beyond it by more than 10% and a point (a row's figures carry noise). */
export const medianWorse = (beforePct: number, afterPct: number): boolean => afterPct > beforePct * 1.1 + 1;

/**
 * The figures `after` leaves worse than `before`, and by how much (log units, 0 where none): a figure is worse when
 * its mean error over the rows grew at all, or its median error grew past `medianWorse` — the "(worse)" the error
 * line prints. A figure `after` cannot predict at all is worse; one the load sets (open-loop rates) never is.
 */
export function worseFigures(before: ErrorReport, after: ErrorReport): { metrics: FitMetricKey[]; by: number } {
  const metrics: FitMetricKey[] = [];
  let by = 0;
  for (const m of FIT_METRICS) {
    const b = before.perMetric[m.key];
    const a = after.perMetric[m.key];
    if (!b || b.setByLoad) continue;
    const grew = (x: number, y: number): number => Math.max(0, Math.log((1 + y / 100) / (1 + x / 100)));
    const d = a ? grew(b.meanPct, a.meanPct) + (medianWorse(b.medianPct, a.medianPct) ? grew(b.medianPct * 1.1 + 1, a.medianPct) : 0) : 1;
    if (d > 1e-12) {
      metrics.push(m.key);
      by += d;
    }
  }
  return { metrics, by };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return Number.NaN;
  return n % 2 ? (s[(n - 1) / 2] as number) : ((s[n / 2 - 1] as number) + (s[n / 2] as number)) / 2;
};

/** A missing prediction counts as a 100% error in the medians. */
const absErrPct = (p: ScoredPoint): number => (Number.isFinite(p.predicted) ? Math.abs(p.predicted / p.measured - 1) * 100 : 100);

export function errorReport(points: readonly ScoredPoint[]): ErrorReport {
  const perMetric: ErrorReport['perMetric'] = {};
  let worstMetric: FitMetricKey | undefined;
  for (const m of FIT_METRICS) {
    const all = points.filter((p) => p.metric === m.key);
    // A metric the load sets in some rows and not in others (open and closed loops) is judged on the others.
    const informative = all.filter((p) => !p.setByLoad);
    const errs = (informative.length > 0 ? informative : all).map(absErrPct);
    if (!errs.length) continue;
    const setByLoad = informative.length === 0;
    perMetric[m.key] = { medianPct: median(errs), meanPct: errs.reduce((a, b) => a + b, 0) / errs.length, n: errs.length, ...(setByLoad ? { setByLoad } : {}) };
    if (!setByLoad && (worstMetric === undefined || median(errs) > (perMetric[worstMetric]?.medianPct ?? -1))) worstMetric = m.key;
  }
  const overallPct = worstMetric !== undefined ? (perMetric[worstMetric]?.medianPct as number) : median(points.map(absErrPct));
  return { perMetric, ...(worstMetric ? { worstMetric } : {}), overallPct, points: points.length, loss: pointLoss(points) };
}

/** Predict the run's rows under `engine` and report the error. */
export function scoreRun(run: MeasuredRun, engine: SimEngineOptions): ErrorReport {
  return errorReport(scorePoints(run, predictRows(run, engine)));
}

const pct = (x: number | undefined): string => (x === undefined || !Number.isFinite(x) ? '–' : `${x < 10 ? x.toFixed(1) : x.toFixed(0)}%`);

/**
 * `TTFT median 32% → 98% (worse), …, req/s 0.3% → 0.5% (set by the load); overall 67% → 98% (worst: TTFT median)`
 * (or one side alone when `after` is absent). Overall is the worst figure the load does not set, so a calibration
 * that made any figure worse cannot read as an improvement.
 */
export function formatErrors(before: ErrorReport, after?: ErrorReport): string {
  const parts = FIT_METRICS.filter((m) => before.perMetric[m.key] || after?.perMetric[m.key]).map((m) => {
    const [b, a] = [before.perMetric[m.key], after?.perMetric[m.key]];
    const worse = a && b && !a.setByLoad && medianWorse(b.medianPct, a.medianPct) ? ' (worse)' : '';
    const set = (a ?? b)?.setByLoad ? ' (set by the load: open loop)' : '';
    return `${m.label} ${pct(b?.medianPct)}${after ? ` → ${pct(a?.medianPct)}` : ''}${worse}${set}`;
  });
  const label = (r: ErrorReport): string | undefined => FIT_METRICS.find((m) => m.key === r.worstMetric)?.label;
  const worst = label(after ?? before);
  return `${parts.join(', ')}; overall ${pct(before.overallPct)}${after ? ` → ${pct(after.overallPct)}` : ''}${worst ? ` (worst: ${worst})` : ''}`;
}
