import type { ErrorCode } from '../core/errors.js';
import type { UsageInfo } from '../dialects/types.js';

/** Timeouts, each with its own error code. */
export interface Timeouts {
  connectMs: number;
  /** Until response headers arrive (E_TIMEOUT_FIRST_BYTE). */
  firstByteMs: number;
  /** Longest silence between two body chunks (E_TIMEOUT_IDLE). */
  idleMs: number;
  /** Whole request, send to end (E_TIMEOUT_TOTAL). */
  totalMs: number;
}

export const defaultTimeouts: Timeouts = {
  connectMs: 10_000,
  firstByteMs: 600_000,
  idleMs: 120_000,
  totalMs: 1_800_000,
};

/** What one HTTP exchange produced, stamped at byte arrival. Turned into a RequestRecord by metrics/. */
export interface Exchange {
  /** Handed to the connection pool (first attempt); sentAtMs − this = waiting for a connection. */
  dispatchedAtMs?: number;
  sentAtMs: number;
  headersAtMs?: number;
  endAtMs: number;
  httpStatus?: number;
  /** The server's request id header (x-sim-request-id, else x-request-id), when it sends one. */
  serverRequestId?: string;
  /** `--replica-header NAME`: that response header's value (which replica a router sent the request to). */
  replicaTag?: string;
  /** Arrival time of every content-bearing chunk (first = first token). Several frames in one read share a time. */
  contentTimesMs: number[];
  /** Exact generated tokens summed over frames that reported them; undefined if any content frame did not. */
  frameTokens?: number;
  /** Generated text pieces in order (joined only when a client-side count is needed). */
  textParts: string[];
  /** Reasoning text the engine sent in its own field (reasoning_content, thinking…), in order; absent when none. */
  reasoningParts?: string[];
  /** Content-bearing frames that carried only reasoning text. */
  reasoningFrames?: number;
  /** Arrival of the first frame with answer text (not reasoning): the first output token of the answer. */
  firstAnswerAtMs?: number;
  usage?: UsageInfo;
  finishReason?: string;
  /** The dialect's final event arrived. */
  done: boolean;
  /** Transparent retries: the first attempt went out on a connection the server had already closed (ConnectionReuse). */
  retries?: number;
  error?: { code: ErrorCode; message: string; httpStatus?: number };
}
