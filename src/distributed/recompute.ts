import type { ArrivalKind, StageResult, StageSpec } from '../load/types.js';
import type { WindowOutcome } from '../load/window.js';
import type { RequestRecord } from '../metrics/record.js';
import { attachServerTelemetry, summarizeStage, type Slo, type StageSummary } from '../metrics/summary.js';

/**
 * The run options a row's summary depends on: the fields of config's RunOptions that recomputing reads, declared
 * here so that distributed/ stays below config/ (src/layers.ts); a RunOptions (or a manifest's saved one) fits.
 */
export interface RecomputeOptions {
  profile: string;
  arrival: ArrivalKind;
  burstiness?: number;
  slo?: Slo;
  workload: { turns?: string; trace?: string; prefixTokens?: number };
}

/**
 * One row's summary recomputed from its records, exactly as the run computed it: the same accumulator and
 * summarizeStage over the same records in the same order, over the window the row recorded. `inferbench merge`
 * builds merged rows this way, and a run's own rows recompute to themselves (the test that checks workers).
 */
export function recomputeStage(
  row: StageSummary,
  records: readonly RequestRecord[],
  window: WindowOutcome | undefined,
  context: { options: RecomputeOptions; startedAtMs: number; endedAtMs: number },
): StageSummary {
  const result: StageResult = {
    spec: specOf(row, context.options),
    index: row.index,
    records: records as RequestRecord[],
    startedAtMs: context.startedAtMs,
    endedAtMs: context.endedAtMs,
    ...(window ? { window } : {}),
    interrupted: false,
  };
  const out = summarizeStage(result, context.options.slo);
  // What the run observed around the row, not from its requests: kept as it was.
  if (row.idleWait) out.idleWait = row.idleWait;
  attachServerTelemetry(out, row.server, result.spec.workload);
  return out;
}

/** The window a row recorded, in the form the drivers hand to summarizeStage (undefined: a batch row). */
export function recordedWindow(row: StageSummary, shiftMs = 0): WindowOutcome | undefined {
  const w = row.window;
  if (!w || w.rule !== 'steady' || w.fromMs === undefined || w.toMs === undefined) return undefined;
  return {
    openAtMs: w.fromMs + shiftMs,
    closeAtMs: w.toMs + shiftMs,
    ...(w.unsettled ? { unsettled: true } : {}),
    ...(w.capSearch ? { capSearch: w.capSearch } : {}),
    ...(row.stoppedEarly ? { stoppedEarly: row.stoppedEarly } : {}),
    ...(row.overSaturated ? { overSaturated: row.overSaturated } : {}),
  };
}

/**
 * The parts of a row's spec its summary reads (kind, load, label, grid cell, arrival process, whether prompts share
 * prefixes on purpose), rebuilt from the saved row and the run's options. Only summaries are made from it.
 */
function specOf(row: StageSummary, o: RecomputeOptions): StageSpec {
  const w = o.workload;
  const sharesPrefixes = w.turns !== undefined || w.trace !== undefined || (w.prefixTokens ?? 0) > 0;
  const base = {
    label: row.label,
    limits: {},
    workload: { description: '', item: () => ({ prompt: '', promptTokens: 0, promptTokenSource: 'client-tokenizer' as const, outputTokens: 0 }), ...(sharesPrefixes ? { sharesPrefixes } : {}) },
    ...(row.grid ? { grid: row.grid } : {}),
  };
  if (row.kind === 'closed') return { ...base, kind: 'closed', concurrency: row.concurrency ?? 1 };
  if (row.kind === 'burst') return { ...base, kind: 'burst' };
  return {
    ...base,
    kind: 'open',
    rate: row.targetRate ?? 0,
    arrival: o.profile === 'replay' ? 'trace' : o.arrival,
    ...(o.burstiness !== undefined ? { burstiness: o.burstiness } : {}),
  };
}
