/**
 * Predictions of many scenarios under many calibrations, for the fit: scenarios whose schedule does not depend
 * on step durations are simulated once and re-priced (replay.ts); the others are simulated each time.
 */
import { resolveSimEngine } from '../create.js';
import { type SeedScenario, type StageSummary, simulateScenario } from '../seed-compare.js';
import { type ReplayTrace, recordReplay, replaySummary } from './replay.js';
import type { Calibration } from './types.js';

export interface FitPoint {
  group: string;
  table: string;
  row: string;
  metric: string;
  family: string;
  published: number;
  predicted: number;
}

export class Evaluator {
  private readonly traces = new Map<SeedScenario, ReplayTrace | null>();
  replayed = 0;
  simulated = 0;

  constructor(private readonly recordCal: Calibration) {}

  summary(sc: SeedScenario, cal: Calibration): StageSummary {
    let trace = this.traces.get(sc);
    if (trace === undefined) {
      const rec = recordReplay(sc, this.recordCal);
      trace = rec.trace ?? null;
      this.traces.set(sc, trace);
    }
    if (trace) {
      this.replayed++;
      return replaySummary(trace, resolveSimEngine({ ...sc.engine, calibration: cal }));
    }
    this.simulated++;
    return simulateScenario({ ...sc, engine: { ...sc.engine, calibration: cal } });
  }

  /** Predicted vs published for the figures of the given roles (default: the fitted ones). */
  points(scenarios: SeedScenario[], cal: Calibration, roles: ReadonlyArray<string> = ['fit']): FitPoint[] {
    const out: FitPoint[] = [];
    for (const sc of scenarios) {
      const metrics = sc.metrics.filter((m) => roles.includes(m.role));
      if (!metrics.length) continue;
      let s: StageSummary | undefined;
      try {
        s = this.summary(sc, cal);
      } catch {
        s = undefined;
      }
      for (const m of metrics) {
        out.push({
          group: sc.group ?? sc.table, table: sc.table, row: sc.row, metric: m.metric, family: m.family ?? m.metric,
          published: m.published, predicted: s ? m.pick(s) : NaN,
        });
      }
    }
    return out;
  }
}

/** Σ w·log²(predicted/published); each table group weighs about the same (w = 1/√points of its group). */
export function weightedLoss(pts: FitPoint[], groupSize: Map<string, number>): number {
  let sum = 0;
  for (const p of pts) {
    const w = 1 / Math.sqrt(groupSize.get(p.group) ?? 1);
    sum += w * (Number.isFinite(p.predicted) && p.predicted > 0 ? Math.log(p.predicted / p.published) ** 2 : 25);
  }
  return sum;
}

export function medianAbsPct(pts: FitPoint[]): number {
  const e = pts.filter((p) => Number.isFinite(p.predicted)).map((p) => Math.abs(p.predicted / p.published - 1) * 100).sort((a, b) => a - b);
  if (!e.length) return NaN;
  const m = e.length >> 1;
  return e.length % 2 ? (e[m] as number) : ((e[m - 1] as number) + (e[m] as number)) / 2;
}
