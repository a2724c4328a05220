import { z } from 'zod';
import type { ErrorCode } from '../core/errors.js';

/** Where a token count came from (design.md §2). */
export const TOKEN_COUNT_SOURCES = ['server-usage', 'server-details', 'client-tokenizer', 'chunk-count'] as const;
export const tokenCountSourceSchema = z.enum(TOKEN_COUNT_SOURCES);
export type TokenCountSource = z.output<typeof tokenCountSourceSchema>;

const errorCode = z.custom<ErrorCode>((v) => typeof v === 'string' && v.startsWith('E_'), 'expected an error code (E_…)');

/**
 * One request as measured (one line of requests.jsonl). Every time is in ms on one monotonic clock (performance.now()
 * in real runs, virtual ms in predictions). Failed and incomplete requests are records too (design.md §2).
 */
export const requestRecordSchema = z.object({
  /** Run-unique index, in dispatch order. */
  id: z.number(),
  /** Index of the stage (table row) this request belongs to. */
  stage: z.number(),
  /**
   * Not measured: sent during the row's ramp-up (warm-up) or its cool-down (`cooldown`); kept on disk, excluded
   * from figures.
   */
  warmup: z.boolean(),
  /**
   * Sent after the row's window closed, while the load stayed on until the requests measured in the window had
   * finished (load/window.ts); always with `warmup: true`. Cancelled once those had finished.
   */
  cooldown: z.boolean().optional(),
  status: z.enum(['ok', 'error', 'incomplete']),

  scheduledAtMs: z.number(),
  sentAtMs: z.number(),
  dispatchLagMs: z.number(),
  /** Part of dispatchLagMs spent waiting for a client concurrency slot (the rest is the client's timer lag). */
  clientQueueMs: z.number(),
  /**
   * Part of dispatchLagMs spent between handing the request to the connection pool and writing it: opening a
   * connection (every request, for a server that closes connections after each reply), or a failed connect.
   */
  connectWaitMs: z.number().optional(),
  headersAtMs: z.number().optional(),
  firstTokenAtMs: z.number().optional(),
  lastTokenAtMs: z.number().optional(),
  endAtMs: z.number(),

  ttftMs: z.number().optional(),
  e2eMs: z.number().optional(),
  queuedE2eMs: z.number().optional(),
  itlMs: z.number().optional(),
  latencyPerTokenMs: z.number().optional(),
  latencyPerOutputTokenMs: z.number().optional(),
  /** Raw gaps between successive content chunks ("chunk gap"; vLLM calls these ITL). */
  chunkGapsMs: z.array(z.number()),
  /** Content-bearing chunks received. */
  chunks: z.number(),

  requestedPromptTokens: z.number(),
  requestedOutputTokens: z.number(),
  promptTokens: z.number(),
  outputTokens: z.number(),
  /** Where outputTokens came from. */
  tokenCountSource: tokenCountSourceSchema,
  /** Where promptTokens came from (server usage when reported, else what the client built). */
  promptTokenSource: tokenCountSourceSchema,
  /** The client's own prompt count, kept beside the server's to expose mismatches. */
  clientPromptTokens: z.number(),
  cachedTokens: z.number().optional(),
  /** Multimodal chat: images sent with the request (`--images`). */
  images: z.number().optional(),
  /**
   * Prompt tokens the images took, derived: the server's prompt count minus the client's count of the text (exact
   * where the client counted with the server's tokenizer). Only where the server reported a prompt count.
   */
  imageTokens: z.number().optional(),
  /** Speculative decoding: verify passes the server reported for this request (SGLang `spec_verify_ct`). */
  specVerifySteps: z.number().optional(),
  /** Reasoning models: output tokens spent reasoning (server count when given) and where that count came from. */
  reasoningTokens: z.number().optional(),
  reasoningTokenSource: tokenCountSourceSchema.optional(),
  /** Time to first output token of the answer, after the reasoning (TTFO), ms. */
  ttfoMs: z.number().optional(),
  /** The answer's own inter-token latency (after its first token), ms. */
  answerItlMs: z.number().optional(),
  /** Embeddings: the texts this request carried (`--batch-size`); promptTokens is their sum, outputTokens 0. */
  inputCount: z.number().optional(),
  /** Multi-turn: the turn index (0 = first) and the conversation it belongs to. */
  turn: z.number().optional(),
  conversationId: z.number().optional(),
  finishReason: z.string().optional(),
  /** The server's id for the request (x-sim-request-id / x-request-id), for joining with server traces. */
  serverRequestId: z.string().optional(),
  /** `run --workers N`: the load worker thread (0-based) that sent it. */
  worker: z.number().optional(),
  /** `--repeat N`: which run of its row (0-based). */
  repeat: z.number().optional(),
  /**
   * Several replicas (`--target URL,URL`): the 0-based index of the endpoint that served it in --target's list; behind
   * one router (`--replica-header NAME`): the replica the response header named (its number, or its order of first
   * appearance when the header is not a number, with the header's text in `replicaName`).
   */
  replica: z.number().optional(),
  replicaName: z.string().optional(),
  /** `run --shard I/N` (and merged runs): the shard that sent it. */
  shard: z.number().optional(),
  /** Sent again on a fresh connection because the server had closed the reused one before reading it (sentAtMs is the retry's). */
  retries: z.number().optional(),

  error: z.object({ code: errorCode, message: z.string(), httpStatus: z.number().optional() }).optional(),
});
export type RequestRecord = z.output<typeof requestRecordSchema>;

/**
 * One request of another tool's file (`inferbench import`), in the record's form as far as the file allows: a field
 * the file cannot give is left out of the line (never written as 0); token-count sources are not claimed. Times are
 * ms from the run's first request start.
 */
export const importedRecordSchema = requestRecordSchema
  .omit({ error: true, tokenCountSource: true, promptTokenSource: true })
  .partial()
  .required({ id: true, stage: true, warmup: true, status: true })
  .extend({
    /** The tool's own failure text; `code` is E_HTTP_STATUS:<status> when the text names one, else E_IMPORTED. */
    error: z.object({ code: z.string(), message: z.string(), httpStatus: z.number().optional() }).optional(),
  });
export type ImportedRecord = z.output<typeof importedRecordSchema>;
