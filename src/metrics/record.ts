import type { ErrorCode } from '../core/errors.js';
import type { TokenCountSource } from '../dialects/types.js';

/**
 * One request as measured. Every time is in ms on one monotonic clock (performance.now() in real runs,
 * virtual ms in predictions). Failed and incomplete requests are records too (design.md §2).
 */
export interface RequestRecord {
  /** Run-unique index, in dispatch order. */
  id: number;
  /** Index of the stage (table row) this request belongs to. */
  stage: number;
  /**
   * Not measured: sent during the row's ramp-up (warm-up) or its cool-down (`cooldown`); kept on disk, excluded
   * from figures.
   */
  warmup: boolean;
  /**
   * Sent after the row's window closed, while the load stayed on until the requests measured in the window had
   * finished (load/window.ts); always with `warmup: true`. Cancelled once those had finished.
   */
  cooldown?: boolean;
  status: 'ok' | 'error' | 'incomplete';

  scheduledAtMs: number;
  sentAtMs: number;
  dispatchLagMs: number;
  /** Part of dispatchLagMs spent waiting for a client concurrency slot (the rest is the client's timer lag). */
  clientQueueMs: number;
  /**
   * Part of dispatchLagMs spent between handing the request to the connection pool and writing it: opening a
   * connection (every request, for a server that closes connections after each reply), or a failed connect.
   */
  connectWaitMs?: number;
  headersAtMs?: number;
  firstTokenAtMs?: number;
  lastTokenAtMs?: number;
  endAtMs: number;

  ttftMs?: number;
  e2eMs?: number;
  queuedE2eMs?: number;
  itlMs?: number;
  latencyPerTokenMs?: number;
  latencyPerOutputTokenMs?: number;
  /** Raw gaps between successive content chunks ("chunk gap"; vLLM calls these ITL). */
  chunkGapsMs: number[];
  /** Content-bearing chunks received. */
  chunks: number;

  requestedPromptTokens: number;
  requestedOutputTokens: number;
  promptTokens: number;
  outputTokens: number;
  /** Where outputTokens came from. */
  tokenCountSource: TokenCountSource;
  /** Where promptTokens came from (server usage when reported, else what the client built). */
  promptTokenSource: TokenCountSource;
  /** The client's own prompt count, kept beside the server's to expose mismatches. */
  clientPromptTokens: number;
  cachedTokens?: number;
  /** Multimodal chat: images sent with the request (`--images`). */
  images?: number;
  /**
   * Prompt tokens the images took, derived: the server's prompt count minus the client's count of the text (exact
   * where the client counted with the server's tokenizer). Only where the server reported a prompt count.
   */
  imageTokens?: number;
  /** Speculative decoding: verify passes the server reported for this request (SGLang `spec_verify_ct`). */
  specVerifySteps?: number;
  /** Reasoning models: output tokens spent reasoning (server count when given) and where that count came from. */
  reasoningTokens?: number;
  reasoningTokenSource?: TokenCountSource;
  /** Time to first output token of the answer, after the reasoning (TTFO), ms. */
  ttfoMs?: number;
  /** The answer's own inter-token latency (after its first token), ms. */
  answerItlMs?: number;
  /** Embeddings: the texts this request carried (`--batch-size`); promptTokens is their sum, outputTokens 0. */
  inputCount?: number;
  /** Multi-turn: the turn index (0 = first) and the conversation it belongs to. */
  turn?: number;
  conversationId?: number;
  finishReason?: string;
  /** The server's id for the request (x-sim-request-id / x-request-id), for joining with server traces. */
  serverRequestId?: string;
  /** `run --workers N`: the load worker thread (0-based) that sent it. */
  worker?: number;
  /** `--repeat N`: which run of its row (0-based). */
  repeat?: number;
  /** `run --shard I/N` (and merged runs): the shard that sent it. */
  shard?: number;
  /** Sent again on a fresh connection because the server had closed the reused one before reading it (sentAtMs is the retry's). */
  retries?: number;

  error?: { code: ErrorCode; message: string; httpStatus?: number };
}

/** A failed or cut request's error as one line: `CODE: message`. */
export function errorText(r: Pick<RequestRecord, 'error'>): string | undefined {
  return r.error ? `${r.error.code}: ${r.error.message}` : undefined;
}
