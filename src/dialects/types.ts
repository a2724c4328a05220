/**
 * The dialect contract: pure request building and frame parsing for one HTTP API.
 * No I/O here; transport/ splits the body into payloads and stamps times, a dialect only interprets them.
 */
import type { ErrorCode } from '../core/errors.js';
import type { TokenCountSource } from '../results/record.js';

export type ApiName =
  | 'openai-chat'
  | 'openai-completions'
  | 'vllm' // vLLM legacy demo server: POST /generate, NUL- or LF-framed cumulative JSON
  | 'tgi'
  | 'sglang'
  | 'lmdeploy'
  | 'llamacpp'
  | 'triton'
  | 'ollama'
  | 'openai-embeddings' // POST /v1/embeddings (vLLM, SGLang, llama.cpp, OpenAI): non-streaming, prompt tokens only
  | 'tei-embeddings'; // Hugging Face text-embeddings-inference: POST /embed

/** How a response body is split into payloads before the dialect sees them. */
export type Framing =
  | 'sse' // payload = the `data` (or `error`) field of one event; comments dropped
  | 'ndjson' // payload = one non-empty line
  | 'nul' // payload = one NUL-terminated JSON object
  | 'nul-or-ndjson' // vLLM legacy: NUL up to 0.6.3, LF later; decided by the first delimiter seen
  | 'json'; // non-streaming: payload = the whole body

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** One generation as the workload describes it, independent of the API. */
export interface GenerationRequest {
  model: string;
  /** Plain prompt text (completion-style APIs). Chat APIs wrap it as one user message unless `messages` is set. */
  prompt: string;
  messages?: ChatMessage[];
  /** Upper bound (and, with forceLength, the exact target) for generated tokens. */
  maxTokens: number;
  /** Ask the engine to ignore EOS / set min tokens so exactly maxTokens are generated, where it can. */
  forceLength: boolean;
  stream: boolean;
  /** Merged last into the JSON body (user's --extra-body). */
  extraBody?: Record<string, unknown>;
  /** Embeddings APIs: the texts of one request (`--batch-size`); absent = one input, `prompt`. */
  inputs?: string[];
  /** Multimodal chat: image data URLs (`data:image/png;base64,…`) the chat APIs attach to the last user message. */
  images?: string[];
}

export interface HttpRequestPlan {
  method: 'POST' | 'GET';
  path: string;
  headers: Record<string, string>;
  body: string;
  framing: Framing;
  /**
   * UTF-8 bytes of `body` when the dialect knows them without scanning it (a body of megabytes of base64 images):
   * counting them costs ~1 ms per MB just before the send. Absent: the transport counts.
   */
  contentLength?: number;
}

/** Where a token count came from; design.md §2 (the results schema's list). */
export type { TokenCountSource } from '../results/record.js';

export interface UsageInfo {
  promptTokens?: number;
  outputTokens?: number;
  cachedTokens?: number;
  /** Output tokens spent reasoning (OpenAI `completion_tokens_details.reasoning_tokens`, SGLang `reasoning_tokens`). */
  reasoningTokens?: number;
  /** Speculative decoding: the verify (target-model) passes this request took (SGLang meta_info `spec_verify_ct`). */
  specVerifySteps?: number;
  source: TokenCountSource;
}

/** What one payload meant. All fields optional; a payload can carry text, usage and the end marker at once. */
export interface FrameEvent {
  /** Newly generated text in this frame (parsers turn cumulative formats into deltas). */
  text?: string;
  /** The part of `text` (its start) that is reasoning, from the engine's own field (`reasoning_content`, `thinking`…). */
  reasoning?: string;
  /** Exact number of generated tokens carried by this frame, when the format says so. */
  tokens?: number;
  usage?: UsageInfo;
  finishReason?: string;
  /** The final event of the response: nothing more is expected. */
  done?: boolean;
  /**
   * An error reported inside the stream (HTTP 200). Always counts as a failed request. `code` is set when
   * the failure has a code of its own (an aborted or errored finish, see _finish.ts `finishFailure`);
   * otherwise the transport files it as E_STREAM_PARSE (type 'parse') or E_STREAM_ERROR.
   */
  error?: { message: string; type?: string; code?: FinishFailureCode };
}

/** Codes for a generation the server itself ended abnormally (design: failures are failures). */
export type FinishFailureCode = Extract<ErrorCode, 'E_ABORTED_BY_SERVER' | 'E_FINISH_ERROR'>;

/** Per-request parsing state (cumulative-text formats need to remember what was already seen). */
export interface StreamParser {
  /**
   * Interpret one payload. `field` is the SSE field name ('data' or 'error'; older llama.cpp sends `error:`);
   * other framings always pass 'data'. Throws nothing: unparsable input returns `{ error }` with type 'parse'.
   */
  frame(payload: string, field: 'data' | 'error'): FrameEvent | null;
  /**
   * Call once when the body ended cleanly (EOF, no reset). Formats without a final event (vLLM legacy,
   * Triton streams) answer `{ done: true }` here; the others answer null, so a body that ended before
   * their final event stays "never done" = truncated.
   */
  end?(): FrameEvent | null;
  /**
   * When the last payload carried nothing but text, sitting as one plain JSON string in a shape the parser
   * has seen before (see ChunkTemplate in _shared.ts): that shape. Any payload `prefix + X + suffix` where X
   * has no quote, backslash or control character then means exactly `{ text: X }` (nothing when X is empty),
   * so the transport may read it without calling frame(). Optional; undefined otherwise.
   */
  textSlot?(): TextSlot | undefined;
}

/** A payload shape with one variable JSON string: payload = prefix + text + suffix. */
export interface TextSlot {
  prefix: string;
  suffix: string;
}

export interface Dialect {
  readonly name: ApiName;
  /** True when the engine behind this API can be told to generate exactly maxTokens. */
  readonly canForceLength: boolean;
  /** True when the stream has no final event of its own and the end of the body ends it (vLLM legacy, Triton). */
  readonly eofIsEnd?: boolean;
  /** Embeddings API: replies carry vectors, not generated text (records have no TTFT/ITL, 0 output tokens). */
  readonly embeddings?: boolean;
  /**
   * Token counts a server sends in response headers rather than the body (TEI's `x-compute-tokens`); called once
   * with the head of a 2xx reply. Usage from the body, where there is one, is merged over it.
   */
  usageFromHeaders?(header: (name: string) => string | undefined): UsageInfo | undefined;
  buildRequest(req: GenerationRequest): HttpRequestPlan;
  /**
   * Pass the request when you have it: cumulative formats that echo the prompt (vLLM legacy, Triton
   * non-stream) strip it, and `stream: false` makes the single payload a whole body that is always done.
   */
  createParser(req?: GenerationRequest): StreamParser;
  /** Turn a non-2xx body into a one-line message (falls back to a trimmed body). */
  errorMessage(status: number, body: string): string;
}
