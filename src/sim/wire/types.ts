/** Contract between the HTTP server core and the per-engine wire writers (pure functions, no I/O). */
import type { SimEngineStats } from '../types.js';

export type SimEngineKind = 'vllm' | 'vllm-legacy' | 'tgi' | 'sglang' | 'lmdeploy' | 'llamacpp' | 'triton' | 'ollama';

export const SIM_ENGINE_KINDS: readonly SimEngineKind[] = ['vllm', 'vllm-legacy', 'tgi', 'sglang', 'lmdeploy', 'llamacpp', 'triton', 'ollama'];

export type FinishReason = 'length' | 'stop' | 'abort';

/** What every writer may print about the served model. */
export interface WireContext {
  engine: SimEngineKind;
  /** Served model name (what clients send as `model`). */
  model: string;
  maxModelLen: number;
  gpu: string;
  gpus: number;
  quant?: string;
  /** Unix seconds when the server started (`created` of model cards). */
  startedAtSec: number;
  /** The engine shares prompt blocks through a prefix cache (its /metrics then export hit/query counters). */
  prefixCaching?: boolean;
  /** OpenAI-route usage carries prompt_tokens_details.cached_tokens (vLLM --enable-prompt-tokens-details, SGLang --enable-cache-report). */
  promptTokensDetails?: boolean;
  /** Speculative decoding's draft length (its /metrics then export the spec_decode counters). */
  specDecode?: { k: number };
  /** The model's hidden size: the length of its embedding vectors (/v1/embeddings). */
  hiddenSize?: number;
}

export interface HttpReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Times on the performance.now() clock, for fields that report durations (TGI headers, llama.cpp timings, Ollama ns). */
export interface GenTimings {
  arrivalMs: number;
  prefillStartMs: number | undefined;
  prefillEndMs: number | undefined;
  firstTokenMs: number | undefined;
  nowMs: number;
  /** Prompt tokens the prefix cache supplied (known once prefill starts; 0 before, and without a cache). */
  cachedTokens?: number;
  /** Engine steps that produced this request's tokens so far (prefill's first token included). */
  tokenSteps?: number;
}

/** Per-request identity the encoders print; `offset` seeds the filler words. */
export interface GenIdentity {
  /** Server-wide request number (also x-sim-request-id). */
  seq: number;
  /** 32 lowercase hex chars derived from the seed and seq (ids like cmpl-<hex>). */
  hex: string;
  offset: number;
  createdSec: number;
  /** Reasoning tokens this request generates before its answer (`--reasoning-tokens`; 0/absent: none). */
  reasoning?: number;
}

/** How the server drives one generation: the engine spec (minus naturalTokens, which the server picks) and an encoder. */
export interface GenPlan {
  promptTokens: number;
  maxTokens: number;
  ignoreEos: boolean;
  minTokens?: number;
  stream: boolean;
  encoder: GenEncoder;
  /**
   * Embeddings: the prompt tokens of each input. Each enters the engine as a prompt that generates nothing; the
   * reply (encoder.body) is written when the last is done. promptTokens is their sum, maxTokens 0.
   */
  poolingInputs?: readonly number[];
}

export interface GenEncoder {
  /** Status and headers of a streaming response. */
  streamHeaders(): Record<string, string>;
  /** Bytes for token `i`; when `finish` is set this token ends the generation and the tail is appended. */
  token(i: number, finish: FinishReason | null, t: GenTimings): string;
  /** Bytes for tokens from..from+n−1 leaving in one event (speculative decoding); absent: one event per token. */
  tokens?(from: number, n: number, finish: FinishReason | null, t: GenTimings): string;
  /** Closing bytes when the generation ended without a token carrying the finish (e.g. zero tokens). */
  tail(count: number, finish: FinishReason, t: GenTimings): string;
  /** The whole non-streaming reply. */
  body(count: number, finish: FinishReason, t: GenTimings): HttpReply;
  /** Frame delimiter of the streaming framing, used to build the malformed-frame fault. */
  readonly delimiter: string;
}

export interface RouteInput {
  method: string;
  path: string;
  /** Captures of the route pattern. */
  params: string[];
  query: URLSearchParams;
  /** Parsed JSON body (undefined for GET). */
  body: unknown;
}

/** Live numbers for /metrics and status endpoints. */
export interface LiveStats extends SimEngineStats {
  requestsTotal: number;
  requestsFailedTotal: number;
}

export type Route =
  | { method: string; path: string | RegExp; kind: 'static'; handle(ctx: WireContext, input: RouteInput, stats: LiveStats): HttpReply }
  | { method: string; path: string | RegExp; kind: 'generate'; handle(ctx: WireContext, input: RouteInput, id: GenIdentity): GenPlan | HttpReply };

export interface EngineWire {
  readonly kind: SimEngineKind;
  /** Version string the sim claims to be (and whose shapes it writes). */
  readonly version: string;
  readonly routes: readonly Route[];
  /** Headers on every response (llama.cpp's `Server: llama.cpp`). */
  readonly commonHeaders: Record<string, string>;
  notFound(method: string, path: string): HttpReply;
  /** Body was not valid JSON. */
  badJson(path: string, message: string): HttpReply;
  /** An error reply with this status (faults 429/500/503), shaped like the engine's errors for `path`. */
  errorReply(status: number, message: string, path: string): HttpReply;
  metrics(ctx: WireContext, stats: LiveStats): string;
}

export function json(status: number, body: string, extra?: Record<string, string>): HttpReply {
  return { status, headers: { 'content-type': 'application/json', ...extra }, body };
}

export function text(status: number, body: string, contentType = 'text/plain; charset=utf-8'): HttpReply {
  return { status, headers: { 'content-type': contentType }, body };
}

export function empty(status = 200): HttpReply {
  return { status, headers: {}, body: '' };
}
