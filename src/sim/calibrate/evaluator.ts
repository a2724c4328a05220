/**
 * Predictions of many scenarios under many calibrations, for the fit. Every request-limited scenario is simulated
 * once and then re-priced (replay.ts): exactly for bursts and one-at-a-time loops, as a surrogate (the recorded
 * batches kept) for open and multi-stream closed loops, whose traces `refresh` re-records under the current
 * calibration at the start of each fit pass. `full: true` evaluations (the figures the fit reports) simulate every
 * surrogate scenario; exact replays equal the simulation by construction (checked when recorded).
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
  /** The deployment the figure was published for (prediction intervals judge distance from the data by these). */
  gpu?: string;
  engine?: string;
  model?: string;
  quant?: string;
  gpus?: number;
  /** The row's load: one request at a time (`sync`), a burst, a closed loop (`closed@N`) or an open rate (`open@R`). */
  load?: string;
}

/** The load a stage puts on the server, as a FitPoint states it. */
export function stageLoad(stage: SeedScenario['stage']): string {
  if (stage.kind === 'burst') return 'burst';
  if (stage.kind === 'closed') return stage.concurrency === 1 ? 'sync' : `closed@${stage.concurrency}`;
  return `open@${stage.rate}`;
}

export interface EvaluatorOptions {
  /** Re-price open and multi-stream closed loops from their recorded batches (default true). */
  surrogate?: boolean;
}

export class Evaluator {
  private readonly traces = new Map<SeedScenario, ReplayTrace | null>();
  replayed = 0;
  simulated = 0;
  /** CPU time (ms) spent simulating (recording included) and re-pricing. */
  simulateMs = 0;
  replayMs = 0;
  private readonly surrogate: boolean;

  constructor(opts: EvaluatorOptions = {}) {
    this.surrogate = opts.surrogate ?? true;
  }

  private record(sc: SeedScenario, cal: Calibration): StageSummary {
    const t0 = performance.now();
    const rec = recordReplay(sc, cal);
    this.simulateMs += performance.now() - t0;
    this.simulated++;
    this.traces.set(sc, rec.trace && (rec.trace.exact || this.surrogate) ? rec.trace : null);
    return rec.summary;
  }

  summary(sc: SeedScenario, cal: Calibration, full = false): StageSummary {
    const trace = this.traces.get(sc);
    // First use: simulated (and recorded) under the calibration asked for, so the figures are the simulation's.
    if (trace === undefined) return this.record(sc, cal);
    if (trace && (trace.exact || !full)) {
      const t0 = performance.now();
      const s = replaySummary(trace, resolveSimEngine({ ...sc.engine, calibration: cal }));
      this.replayMs += performance.now() - t0;
      this.replayed++;
      return s;
    }
    const t0 = performance.now();
    const s = simulateScenario({ ...sc, engine: { ...sc.engine, calibration: cal } });
    this.simulateMs += performance.now() - t0;
    this.simulated++;
    return s;
  }

  /**
   * Re-record the surrogate traces of these scenarios under `cal` (exact traces hold under any calibration) and
   * return the number re-recorded; a scenario is recorded on first use under the calibration of that use.
   */
  refresh(scenarios: SeedScenario[], cal: Calibration): number {
    return this.recordUnder(scenarios, cal, false);
  }

  /**
   * Record every scenario not yet recorded and re-record the surrogates, all under `cal`: leave-one-table-out starts
   * from here, so its figures do not depend on which tables a process happened to refit first (fit.ts --jobs).
   */
  prime(scenarios: SeedScenario[], cal: Calibration): void {
    this.recordUnder(scenarios, cal, true);
  }

  /** (Re-)records the surrogate traces, and with `unrecorded` the scenarios never recorded; returns the count. */
  private recordUnder(scenarios: SeedScenario[], cal: Calibration, unrecorded: boolean): number {
    const at = structuredClone(cal);
    let n = 0;
    for (const sc of scenarios) {
      const t = this.traces.get(sc);
      if (t === null || t?.exact || (t === undefined && !unrecorded)) continue;
      try {
        this.record(sc, at);
        n++;
      } catch {
        this.traces.set(sc, null);
      }
    }
    return n;
  }

  /** Predicted vs published for the figures of the given roles (default: the fitted ones). */
  points(scenarios: SeedScenario[], cal: Calibration, roles: ReadonlyArray<string> = ['fit'], full = false): FitPoint[] {
    const out: FitPoint[] = [];
    for (const sc of scenarios) {
      const metrics = sc.metrics.filter((m) => roles.includes(m.role));
      if (!metrics.length) continue;
      let s: StageSummary | undefined;
      try {
        s = this.summary(sc, cal, full);
      } catch {
        s = undefined;
      }
      for (const m of metrics) {
        out.push({
          group: sc.group ?? sc.table, table: sc.table, row: sc.row, metric: m.metric, family: m.family ?? m.metric,
          published: m.published, predicted: s ? m.pick(s) : NaN,
          gpu: sc.engine.gpu, engine: sc.engine.engine, model: sc.engine.model, quant: sc.engine.quant ?? 'none',
          gpus: sc.engine.gpus, load: stageLoad(sc.stage),
        });
      }
    }
    return out;
  }
}

/**
 * Σ w·log²(predicted/published); each table group weighs about the same (w = 1/√points of its group), times
 * `groupWeight` (fit.ts --seed-weight gives the seed files more).
 */
export function weightedLoss(pts: FitPoint[], groupSize: Map<string, number>, groupWeight: (group: string) => number = () => 1): number {
  let sum = 0;
  for (const p of pts) {
    const w = groupWeight(p.group) / Math.sqrt(groupSize.get(p.group) ?? 1);
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
