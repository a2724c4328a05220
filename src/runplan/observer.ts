/**
 * What watches a run: progress lines, the run folder's writer, a dashboard's live feed, the server telemetry's
 * row marks. Each is a RunObserver; the executor calls one fan-out, which calls every observer that has the hook
 * (as vitest's reporters). Per-request hooks run on the hot path: they must only count or append, never wait.
 * Row hooks run between rows; `onStageEdge` and `onStageEnd` may return a promise, awaited there (telemetry reads the
 * server's counters at a row's edges; the run folder puts a row's records on the disk before it calls the row
 * finished), never while requests are being sent.
 */
import type { BenchmarkResult } from '../load/benchmark.js';
import type { StageResult, StageSpec } from '../load/types.js';
import type { RequestRecord } from '../metrics/record.js';
import type { StageSummary } from '../metrics/summary.js';

export interface RunObserver {
  /** A request was handed to the sender (hot path). */
  onDispatch?(): void;
  /** A request ended, successfully or not (hot path). */
  onRecord?(record: RequestRecord): void;
  /** Around each row, once however many repeats: 'start' before any barrier wait, 'end' after its last request. */
  onStageEdge?(index: number, edge: 'start' | 'end'): Promise<void> | void;
  onStageStart?(spec: StageSpec, index: number): void;
  /**
   * After each row: its summary (observers may add to it, e.g. the server's telemetry) and its raw result. Awaited,
   * observer by observer: a later observer sees what an earlier one finished (the live feed, the row's summary.json).
   */
  onStageEnd?(summary: StageSummary, result: StageResult): Promise<void> | void;
  /** Once, after the last row (or the interruption): before the results are written and printed. */
  onRunEnd?(result: BenchmarkResult): Promise<void> | void;
}

type Hook = keyof RunObserver;

/** One RunObserver that calls each of `observers` in order; hooks nobody has cost nothing on the hot path. */
export function fanOut(observers: readonly (RunObserver | undefined)[]): Required<RunObserver> & { has(hook: Hook): boolean } {
  const all = observers.filter((o): o is RunObserver => o !== undefined);
  const having = <H extends Hook>(hook: H): RunObserver[] => all.filter((o) => o[hook] !== undefined);
  const dispatch = having('onDispatch');
  const record = having('onRecord');
  const edge = having('onStageEdge');
  const start = having('onStageStart');
  const end = having('onStageEnd');
  const runEnd = having('onRunEnd');
  return {
    has: (hook) => having(hook).length > 0,
    onDispatch: () => {
      for (const o of dispatch) o.onDispatch?.();
    },
    onRecord: (r) => {
      for (const o of record) o.onRecord?.(r);
    },
    onStageEdge: async (i, e) => {
      for (const o of edge) await o.onStageEdge?.(i, e);
    },
    onStageStart: (spec, i) => {
      for (const o of start) o.onStageStart?.(spec, i);
    },
    onStageEnd: async (s, r) => {
      for (const o of end) await o.onStageEnd?.(s, r);
    },
    onRunEnd: async (result) => {
      for (const o of runEnd) await o.onRunEnd?.(result);
    },
  };
}
