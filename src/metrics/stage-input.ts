import type { RequestRecord } from '../results/record.js';
import type { CapSearch } from '../results/stage.js';
import type { StageAccumulator } from './accumulator.js';

/**
 * What summarizeStage reads of a finished stage: the parts of load/'s StageResult (and its StageSpec, WindowRules and
 * WindowOutcome) it needs, declared here so that metrics/ stays below load/ (src/layers.ts); a StageResult fits.
 */
export interface StageInput {
  spec: StageInputSpec;
  index: number;
  /** Records kept in memory (empty when the runner streamed them out). */
  records: readonly RequestRecord[];
  /** When present, the summary comes from here instead of `records`. */
  accumulator?: StageAccumulator;
  startedAtMs: number;
  endedAtMs: number;
  /** The steady window the figures cover (absent: first send → last completion). */
  window?: WindowOutcome;
  /** True if the run was interrupted during this stage. */
  interrupted: boolean;
  /** `run --shard I/N`: the share of the row's load this process sent (its rate test scales by it). */
  loadShare?: number;
  /** The row stopped because nothing completed for its stall limit: why, and how many requests had completed in it. */
  stalled?: { reason: string; completed: number };
}

/** The stage spec's fields a summary reads (load/types.ts StageSpec fits). */
export type StageInputSpec = StageInputBase &
  ({ kind: 'closed'; concurrency: number } | { kind: 'open'; rate: number; arrival: string; burstiness?: number } | { kind: 'burst' });

interface StageInputBase {
  label: string;
  workload: { sharesPrefixes?: boolean };
  window?: StageInputWindowRules;
  grid?: { input: number; output: number; role: 'throughput' | 'latency' };
}

/** The window rules a few-requests check reads (load/window.ts WindowRules fits). */
export interface StageInputWindowRules {
  measureMs?: number;
  measureRequests?: number;
  minSamples: number;
  extendFactor: number;
  /** Sweep rows: the window may stay open up to this for minSamples (load/window/rules.ts). */
  sampleWindowMaxMs?: number;
}

/** What the drivers report about a row's window (StageResult.window); load/window re-exports it. */
export interface WindowOutcome {
  /** null for batch rows: the whole row is measured. */
  openAtMs: number | null;
  closeAtMs: number | null;
  /** The window opened at the ramp limit, not because the server had settled. */
  unsettled?: boolean;
  /**
   * The in-flight cap an adaptive throughput row settled on, the completion rate each step reached (queued: its
   * requests waited at the server for over half their latency), and the requests in flight the window measured
   * (time-weighted mean and max between its open and its close): the figures describe that load, whatever the cap.
   */
  capSearch?: CapSearch;
  /** Why sending stopped before the row's limit (e.g. a streak of fast failures). */
  stoppedEarly?: string;
  /** Set (with stoppedEarly) when the row stopped because its queue kept growing; the drivers cancel what is in flight. */
  overSaturated?: string;
}
