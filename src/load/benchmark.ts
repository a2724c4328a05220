import { aggregateRepeats } from '../metrics/repeats.js';
import { summarizeStage, type Slo, type StageSummary } from '../metrics/summary.js';
import { nextStage, type ProfileConfig } from './profiles.js';
import type { StageResult, StageRunner, StageSpec } from './types.js';

export interface BenchmarkHooks {
  signal?: AbortSignal;
  /** Stages already finished by an earlier, interrupted run of the same profile (resume). */
  completed?: StageSummary[];
  /** First request id to use (resume continues the numbering). */
  firstRequestId?: number;
  /**
   * A `--resume`d part's id space (resumePartIdBase): its rows number from this base plus their own fixed base, so
   * no id — nor synthetic prompt — repeats one an earlier part sent, the cut row's included.
   */
  idBase?: number;
  /** Requests the finished rows sent (resume): where a finite workload continues. */
  firstItem?: number;
  slo?: Slo;
  /** `--steady-state`: each row also gets its figures over the stretch of steady in-flight count (metrics/steady-state.ts). */
  steadyState?: boolean;
  /** `--repeat N`: run every row N times and report the mean with a 95% interval (metrics/repeats.ts). */
  repeat?: number;
  /**
   * Before each row after the first: wait until the server is idle (real runs). What it says is kept on the
   * row's summary as `idleWait`.
   */
  beforeStage?(spec: StageSpec, index: number, done: readonly StageSummary[]): Promise<StageSummary['idleWait']>;
  /** Just before each row, after any idle wait (shards meet here to start the row together). */
  alignStage?(index: number): Promise<void>;
  /**
   * Around each row (once, however many repeats): 'start' before any barrier wait, 'end' after its last request,
   * before onStageEnd. Real runs read the server's counters here, so a row's counter increase covers the whole row.
   */
  markStage?(index: number, edge: 'start' | 'end'): Promise<void>;
  onStageStart?(spec: StageSpec, index: number): void;
  /** May return a promise: awaited before the next row (a run puts the row's records on the disk here). */
  onStageEnd?(summary: StageSummary, result: StageResult): Promise<void> | void;
  /**
   * Real runs (`--stall-timeout`): a row stops once requests are open and none has completed nor received bytes for this long — or
   * for 10× the synchronous row's median latency, once a synchronous row has run and that is longer.
   */
  stallMs?: number;
  /** Asked after each stage: a reason string ends the run there (e.g. every request was refused). */
  stopReason?(summary: StageSummary): string | undefined;
}

export interface BenchmarkResult {
  stages: StageSummary[];
  results: StageResult[];
  interrupted: boolean;
  /** Why the run ended early, when stopReason said so. */
  stoppedBecause?: string;
}

/** Walks a profile stage by stage on any runner (real HTTP or the simulator in virtual time). */
export async function runBenchmark(cfg: ProfileConfig, runner: StageRunner, hooks: BenchmarkHooks = {}): Promise<BenchmarkResult> {
  const stages: StageSummary[] = [...(hooks.completed ?? [])];
  const results: StageResult[] = [];
  let nextId = Math.max(hooks.firstRequestId ?? 0, hooks.idBase ?? 0);
  /** Requests sent so far: where a finite workload (dataset, trace) continues. */
  let nextItem = hooks.firstItem ?? hooks.firstRequestId ?? 0;
  for (;;) {
    if (hooks.signal?.aborted) break;
    const next = nextStage(cfg, stages);
    if (!next) break;
    const spec = hooks.stallMs !== undefined ? { ...next, stallMs: stallLimitMs(hooks.stallMs, stages) } : next;
    const index = stages.length;
    const repeats = Math.max(1, hooks.repeat ?? 1);
    const runs: StageSummary[] = [];
    let interrupted = false;
    let idleWait: StageSummary['idleWait'];
    let last: StageResult | undefined;
    for (let r = 0; r < repeats; r++) {
      // A finite workload (dataset, trace) continues where the earlier rows left it.
      const runSpec = { ...spec, ...(spec.workload.size !== undefined ? { firstItem: nextItem } : {}), ...(repeats > 1 ? { repeat: r } : {}) };
      const waited = index > 0 || r > 0 ? await hooks.beforeStage?.(runSpec, index, stages) : undefined;
      idleWait ??= waited;
      if (hooks.signal?.aborted) break;
      if (r === 0) await hooks.markStage?.(index, 'start');
      await hooks.alignStage?.(index);
      if (hooks.signal?.aborted) break;
      if (r === 0) hooks.onStageStart?.(spec, index);
      const firstId = rowFirstRequestId(index, r, repeats, nextId, hooks.idBase);
      const result = await runner.runStage(runSpec, index, firstId);
      const sent = result.requestCount ?? result.records.length;
      nextId = firstId + sent;
      nextItem += sent;
      const one = summarizeStage(result, hooks.slo, { steadyState: hooks.steadyState === true });
      if (repeats > 1) one.repeat = r;
      if (waited) one.idleWait = waited;
      runs.push(one);
      results.push(result);
      last = result;
      if (result.interrupted) {
        interrupted = true;
        break;
      }
    }
    if (!last) break;
    const summary = repeats > 1 ? aggregateRepeats(runs) : (runs[0] as StageSummary);
    if (idleWait) summary.idleWait = idleWait;
    if (interrupted) summary.interrupted = true;
    stages.push(summary);
    await hooks.markStage?.(index, 'end');
    await hooks.onStageEnd?.(summary, last);
    if (interrupted) break;
    const reason = hooks.stopReason?.(summary);
    if (reason !== undefined) {
      return { stages, results, interrupted: false, stoppedBecause: reason };
    }
  }
  return { stages, results, interrupted: hooks.signal?.aborted === true };
}

/**
 * Request ids a row's runs leave between their bases: row i's run r starts at (i × repeats + r) × this, so its ids
 * — and, for synthetic prompts, its prompts — are fixed by the plan, not by how many requests earlier rows happened
 * to send: a saved plan re-run (`run --plan`) sends the same ids and prompts on every row.
 */
export const ROW_ID_STRIDE = 1_000_000;

/**
 * Ids a `--resume`d part leaves between its base and the previous part's: part p (1 for the first resume) numbers
 * its rows from p × this. A cut row runs again from its start, and with the ids of its first attempt it would resend
 * that attempt's prompts, which a server with a prefix cache then answers from its cache.
 */
export const RESUME_PART_ID_STRIDE = ROW_ID_STRIDE * 1_000_000;

/** Where part `part` of a run numbers its requests from (0: the run as started; 1, 2, …: each `--resume`). */
export function resumePartIdBase(part: number): number {
  return part * RESUME_PART_ID_STRIDE;
}

/** The first request id of row `index`'s run `repeat`: its fixed base, or after the previous run if that overflowed. */
export function rowFirstRequestId(index: number, repeat: number, repeats: number, nextId: number, idBase = 0): number {
  return Math.max(nextId, idBase + (index * Math.max(1, repeats) + repeat) * ROW_ID_STRIDE);
}

/** A row's stall limit: the configured one, or 10× the synchronous latency (median) once known, whichever is longer. */
export function stallLimitMs(configuredMs: number, done: readonly StageSummary[]): number {
  const sync = done.find((s) => s.label === 'synchronous')?.metrics.e2eMs?.median;
  return Math.max(configuredMs, sync !== undefined && Number.isFinite(sync) ? 10 * sync : 0);
}
