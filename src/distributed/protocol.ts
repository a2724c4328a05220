import type { ApiName, GenerationRequest, HttpRequestPlan } from '../dialects/types.js';
import type { Exchange, Timeouts } from '../transport/exchange.js';
import type { ClockBase } from './clock-offset.js';
import type { WorkerStats } from '../results/run-summary.js';

/** What a load worker thread is started with (workerData). */
export interface WorkerSetup {
  index: number;
  baseUrl: string;
  connections: number;
  timeouts?: Partial<Timeouts>;
  apiKey?: string;
  /** `--replica-header`: the response header naming the replica that served each request. */
  replicaHeader?: string;
  /** The coordinator's clock: the worker puts its stamps on it before sending them back. */
  coordinatorClock: ClockBase;
}

/** Coordinator → worker. */
export type ToWorker =
  | {
      type: 'send';
      id: number;
      api: ApiName;
      plan: HttpRequestPlan;
      request: GenerationRequest;
      /** Coordinator clock: do not send before this instant (open loops hand requests over a little early). */
      notBeforeMs?: number;
      /** Keep the generated text even when the server counted the tokens (a conversation resends it). */
      keepText: boolean;
      /** Say when reply bytes arrive (a `reply` message, a few a second per worker at most): the row's stall watch. */
      notifyReply?: boolean;
    }
  | { type: 'abort-all'; reason?: string }
  | { type: 'stats' }
  | { type: 'close' };

export type { WorkerStats } from '../results/run-summary.js';

/** Worker → coordinator. */
export type FromWorker =
  | { type: 'ready'; clock: ClockBase; residualNs: number }
  | { type: 'exchange'; id: number; exchange: Exchange }
  /** Request `id` received reply bytes (its head or body): the server is answering. */
  | { type: 'reply'; id: number }
  | { type: 'stats'; stats: WorkerStats }
  | { type: 'closed' };
