import type { StageInput } from '../metrics/stage-input.js';
import type { RequestRecord } from '../metrics/record.js';
import type { Workload } from '../workload/types.js';
import type { WindowRules } from './window.js';

/** `trace`: each item carries its own arrival offset (replay). */
export type ArrivalKind = 'constant' | 'poisson' | 'gamma' | 'trace';

/** When to stop a stage, and what to leave out of its figures. */
export interface StageLimits {
  maxRequests?: number;
  maxSeconds?: number;
  /** Requests sent in the first `warmupSeconds` are excluded from figures. */
  warmupSeconds?: number;
}

interface StageBase {
  /** Row label as printed: `synchronous`, `concurrent@8`, `asynchronous@2.50 req/sec`, `throughput`, `128/512`. */
  label: string;
  limits: StageLimits;
  workload: Workload;
  /** Steady-window rules (window.ts); absent for batch rows, which are measured whole. */
  window?: WindowRules;
  /**
   * Real runs: stop the row when requests are open and none has completed for this long (a server that accepts
   * requests and never answers). Set by runBenchmark from `--stall-timeout` and the synchronous latency.
   */
  stallMs?: number;
  /** `--repeat N`: which run of the row this is (0-based); its arrivals draw from seed + repeat. */
  repeat?: number;
  /**
   * Finite workloads (a dataset, a trace): where in the workload this row starts, counted over the requests the
   * earlier rows sent, so rows walk the dataset in order. Unset: the row's first request id picks its items.
   */
  firstItem?: number;
  /** Grid rows: the cell and which columns this stage supplies (throughput burst or low-load latency pass). */
  grid?: { input: number; output: number; role: 'throughput' | 'latency' };
}

/** Closed loop: N streams, each sends its next request when the previous one ends (synchronous = 1). */
export interface ClosedStage extends StageBase {
  kind: 'closed';
  concurrency: number;
}

/** Open loop: arrivals at absolute target times, optionally capped by a client-side concurrency limit. */
export interface OpenStage extends StageBase {
  kind: 'open';
  rate: number;
  arrival: ArrivalKind;
  /** Gamma arrivals as vLLM defines them: shape = burstiness, mean gap = 1/rate; 1 = Poisson, lower = burstier. */
  burstiness?: number;
  maxConcurrency?: number;
}

/** Everything at once (throughput): `maxRequests` requests scheduled at t=0, in flight up to maxConcurrency. */
export interface BurstStage extends StageBase {
  kind: 'burst';
  maxConcurrency?: number;
}

export type StageSpec = ClosedStage | OpenStage | BurstStage;

/**
 * What a stage runner hands back. Virtual-time runners keep their records; the real-time driver keeps
 * none (they went to onRecord, i.e. to disk) and folds them into an accumulator as they finish, so
 * memory stays flat however long the stage runs.
 */
export interface StageResult extends StageInput {
  spec: StageSpec;
  records: RequestRecord[];
  /** Requests this stage sent; defaults to records.length. */
  requestCount?: number;
}

/** Runs one stage against some target: real HTTP, or the simulator in virtual time. */
export interface StageRunner {
  /**
   * `firstRequestId` numbers the stage's requests (rowFirstRequestId: a base fixed by the row's place in the run)
   * and is also where in an unbounded (synthetic) workload the stage starts, so no row of a run — nor a resumed
   * part — resends a prompt an earlier row sent; finite workloads start at `spec.firstItem`.
   * Trace replays are the exception: their items are the trace, in order.
   */
  runStage(spec: StageSpec, index: number, firstRequestId: number): Promise<StageResult>;
}
