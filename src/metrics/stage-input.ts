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
  records: readonly RequestRecord[];
  accumulator?: StageAccumulator;
  startedAtMs: number;
  endedAtMs: number;
  window?: {
    openAtMs: number | null;
    closeAtMs: number | null;
    unsettled?: boolean;
    capSearch?: CapSearch;
    stoppedEarly?: string;
    overSaturated?: string;
  };
  interrupted: boolean;
  loadShare?: number;
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
}
