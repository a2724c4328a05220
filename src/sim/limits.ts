/**
 * Context limits of a simulated engine, checked before anything is simulated: a request shape the engine
 * refuses outright is a user mistake (one line, exit 2), and a context longer than the KV cache can hold is
 * worth a warning (vLLM refuses to start then).
 */
import { configError } from '../core/errors.js';
import { kvBytesPerTokenPerGpu } from './catalog/models.js';
import type { ResolvedSimEngine } from './create.js';
import type { SimEngineKind } from './wire/types.js';

/** What each engine calls its context limit. */
const LIMIT_NAME: Partial<Record<SimEngineKind, string>> = {
  tgi: 'max_total_tokens',
  lmdeploy: 'session_len',
  llamacpp: 'n_ctx',
  ollama: 'num_ctx',
  sglang: 'context_length',
};

export interface RequestShape {
  promptTokens: number;
  outputTokens: number;
  /** The flags that set these lengths, for the hint (e.g. "--prompt-tokens/--output-tokens"). */
  flags: string;
}

/** Throws a one-line configuration error when the engine would refuse every request of this shape. */
export function checkRequestFits(r: ResolvedSimEngine, shape: RequestShape): void {
  const a = r.admit(shape.promptTokens, shape.outputTokens);
  if (a.ok) return;
  const d = r.description;
  const limit = LIMIT_NAME[r.profile.wire] ?? 'max_model_len';
  throw configError(
    `prompt ${shape.promptTokens} + output ${shape.outputTokens} tokens do not fit the ${d.maxModelLen}-token context (${limit}) of ${d.model} on ${r.profile.name}: every request would fail with HTTP ${a.status} (${a.message})`,
    `lower ${shape.flags} so that prompt + output ≤ ${d.maxModelLen}, or pick a model with a longer context`,
  );
}

const GIB = 2 ** 30;

/**
 * One line when max_model_len exceeds the KV cache: what vLLM says when it refuses to start (V1:
 * kv_cache_utils.check_enough_kv_cache_memory; V0: the block manager check), else what happens to longer
 * requests. TGI lowers max_total_tokens to the cache instead, so it never gets here.
 */
export function kvCapacityWarning(r: ResolvedSimEngine): string | undefined {
  const d = r.description;
  if (d.kvTokens >= d.maxModelLen) return undefined;
  const fix = 'Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.';
  if (r.profile.id === 'vllm-v1') {
    const perToken = kvBytesPerTokenPerGpu(r.model, d.gpus);
    const gib = (bytes: number): string => (bytes / GIB).toFixed(2);
    return (
      `warning: vLLM would refuse to start: To serve at least one request with the model's max seq len (${d.maxModelLen}), ` +
      `(${gib(d.maxModelLen * perToken)} GiB KV cache is needed, which is larger than the available KV cache memory (${gib(d.kvTokens * perToken)} GiB). ` +
      `Based on the available memory, the estimated maximum model length is ${d.kvTokens}. ${fix}`
    );
  }
  if (r.profile.wire === 'vllm' || r.profile.wire === 'vllm-legacy') {
    return `warning: vLLM would refuse to start: The model's max seq len (${d.maxModelLen}) is larger than the maximum number of tokens that can be stored in KV cache (${d.kvTokens}). ${fix}`;
  }
  return `warning: the KV cache of ${d.model} on ${d.gpus}× ${d.gpu} holds ${d.kvTokens} tokens, less than its ${d.maxModelLen}-token context: a longer request never runs (the simulated ${d.engineLabel} aborts it)`;
}
