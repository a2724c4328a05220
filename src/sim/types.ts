/**
 * The simulated engine's boundary. The engine never knows which clock it runs on: a virtual driver
 * fast-forwards (predict), a real-time driver paces events against performance.now() (sim server).
 * Times are milliseconds on the driver's clock (for the real-time driver: performance.now()).
 */

/** What the HTTP front (or the predictor) asks the engine to do. */
export interface SimRequestSpec {
  promptTokens: number;
  /** Cap on generated tokens. */
  maxTokens: number;
  /** With ignoreEos the engine generates exactly maxTokens (minTokens is then moot). */
  ignoreEos: boolean;
  minTokens?: number;
  /**
   * Output length the "model" would choose on its own when EOS is not ignored (the sim has no real
   * model: the front picks it, seeded, so TGI/Ollama-style unforced lengths vary like real ones).
   */
  naturalTokens?: number;
  /**
   * Chained hashes of the prompt's full 16-token blocks (wire/prompt-hash.ts), for engines with a prefix cache:
   * leading blocks another request computed are shared and not prefilled again.
   */
  blockHashes?: readonly number[];
  /** Images: the vision encoder's FLOPs, charged to the step that starts this request's prefill (cost/step-cost.ts). */
  visionFlops?: number;
  /** Prefill only (an embeddings input): the request generates no token and finishes when its prompt is computed. */
  pooling?: boolean;
  /**
   * The prompt's KV was computed by another engine and transferred here (prefill/decode disaggregation, cluster/pd.ts):
   * the engine only admits its KV blocks and decodes; it runs no prefill for it and does not count it as a prompt.
   */
  prefilled?: boolean;
}

/** Per-request callbacks, invoked on the driver's clock at the moment the event happens. */
export interface SimRequestListener {
  /** The request was admitted to a batch (prefill starts); `cachedTokens` of its prompt came from the prefix cache. */
  onPrefillStart?(atMs: number, cachedTokens: number): void;
  /** Prefill finished (the first token is produced by the same step). */
  onPrefillEnd?(atMs: number): void;
  /** Prefill/decode disaggregation: the prompt's KV reached the decode engine (cluster/pd.ts); decoding may start. */
  onTransferEnd?(atMs: number): void;
  /** Token `index` (0-based) was produced at `atMs`. Called once per token, in order. */
  onToken(index: number, atMs: number): void;
  /** Tokens `from`..`from + count − 1` of one speculative step, produced together (else onToken is called for each). */
  onTokens?(from: number, count: number, atMs: number): void;
  /** The request left the engine. `length` = hit maxTokens, `stop` = natural end, `abort` = cancelled. */
  onFinish(reason: 'length' | 'stop' | 'abort', atMs: number): void;
  /** The request was preempted (KV exhausted) and will be recomputed. */
  onPreempt?(atMs: number): void;
}

export interface SimRequestHandle {
  readonly id: number;
  /** Client went away: free its KV blocks and stop generating. */
  cancel(): void;
  /** Prefill/decode disaggregation (cluster/pd.ts): the engines serving it, 0-based within the prefill and the decode pool. */
  readonly route?: { readonly prefill: number; readonly decode: number };
}

/** Live engine state, for /metrics and progress. */
export interface SimEngineStats {
  running: number;
  waiting: number;
  /** Fraction of KV-cache blocks in use, 0..1. */
  kvCacheUsage: number;
  kvBlocksTotal: number;
  preemptionsTotal: number;
  promptTokensTotal: number;
  generationTokensTotal: number;
  requestsFinishedTotal: number;
  stepsTotal: number;
  /** Prompt tokens looked up in the prefix cache (vLLM's prefix_cache_queries) and found there (hits); 0 without one. */
  prefixCacheQueryTokensTotal: number;
  prefixCacheHitTokensTotal: number;
  /** Hit rate of the last 32 admissions (SGLang's cache_hit_rate gauge follows recent batches). */
  prefixCacheRecentHitRate: number;
  /** Speculative decoding: draft tokens proposed and accepted (vLLM's spec_decode counters); 0 without it. */
  specDraftTokensTotal: number;
  specAcceptedTokensTotal: number;
}

export interface SimEngine {
  submit(spec: SimRequestSpec, listener: SimRequestListener): SimRequestHandle;
  stats(): SimEngineStats;
  /** Largest prompt + output the engine accepts (max_model_len). */
  readonly maxModelLen: number;
  /** Description for /v1/models, /info etc. */
  readonly modelName: string;
}
