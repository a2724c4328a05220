/**
 * `predict`'s prediction intervals (docs/accuracy.md): which residuals they come from for this deployment, each row's
 * intervals, and the capacity answer's interval — the same search run again with the engine's time at the ends of
 * the ITL interval under load.
 */
import type { RunOptions } from '../config/run-options.js';
import { capacityResult } from '../load/capacity.js';
import type { CapacityResult, StageSummary } from '../results/index.js';
import { capacityTimeScales, type IntervalBasis, stageIntervals } from '../sim/calibrate/predict-intervals.js';
export { intervalBasis } from '../sim/calibrate/predict-intervals.js';

/** Sets `predictionIntervals` on every row (and on each repeat's own row). */
export function attachStageIntervals(stages: StageSummary[], basis: IntervalBasis): void {
  for (const s of stages) {
    const pi = stageIntervals(s, basis);
    if (pi) s.predictionIntervals = pi;
    for (const r of s.repeats ?? []) {
      const rp = stageIntervals(r, basis);
      if (rp) r.predictionIntervals = rp;
    }
  }
}

/** Runs the capacity search again under an engine `timeScale` times slower: its stages. */
export type CapacityRerun = (timeScale: number) => Promise<StageSummary[]>;

/** The capacity's interval: the searches at the slow and fast ends (null where no load met the SLO). */
export async function capacityInterval(
  opts: Pick<RunOptions, 'capacity'>, basis: IntervalBasis, rerun: CapacityRerun,
): Promise<NonNullable<CapacityResult['interval']> | undefined> {
  const settings = opts.capacity;
  const scales = capacityTimeScales(basis);
  if (!settings || !scales) return undefined;
  const at = async (k: number): Promise<number | null> => capacityResult(await rerun(k), settings).feasibleMax;
  const low = await at(scales.slow);
  const high = await at(scales.fast);
  return {
    low, high, level: Math.round(basis.level * 1000) / 10,
    timeScales: { slow: round3(scales.slow), fast: round3(scales.fast) }, source: scales.source,
  };
}

const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/** The line under a capacity answer: `capacity 80% interval: 17.20–24.10 req/s (engine time ×1.18 … ×0.86)`. */
export function capacityIntervalLine(iv: NonNullable<CapacityResult['interval']>, unit: string): string {
  const v = (x: number | null): string => (x === null ? 'none' : x.toFixed(2));
  const basis = iv.source?.startsWith('calibration') ? 'the calibration\'s ITL spread' : `held-out ITL residuals (${iv.source ?? 'itl'})`;
  return `capacity ${iv.level}% interval: ${v(iv.low)}–${v(iv.high)} ${unit} (the same search with the engine's time ×${iv.timeScales?.slow ?? '?'} and ×${iv.timeScales?.fast ?? '?'}, the ends of ${basis}; "none": no load met the SLO there)`;
}
