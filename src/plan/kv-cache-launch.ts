/**
 * `plan --kv-cache-dtype fp8|int8`: how each engine's launch command asks for an 8-bit KV cache. A candidate whose
 * engine has no such option is skipped with the reason (as an engine that cannot load a weight format is), so the
 * plan never recommends a deployment its launch line cannot start.
 */
import type { KvCacheDtype } from '../sim/catalog/types.js';

const TRTLLM_FP8 = "--extra_llm_api_options kv-cache.yaml  # kv-cache.yaml holds 'kv_cache_config: {dtype: fp8}'";

/** Engine name (as `--engine` lists it) → the flags that select each 8-bit KV-cache type in its launch command. */
const KV_CACHE_LAUNCH: Record<string, Partial<Record<Exclude<KvCacheDtype, 'auto'>, string>>> = {
  vllm: { fp8: '--kv-cache-dtype fp8' },
  'vllm-v0': { fp8: '--kv-cache-dtype fp8' },
  sglang: { fp8: '--kv-cache-dtype fp8_e4m3' },
  tgi: { fp8: '--kv-cache-dtype fp8_e4m3fn' },
  // TurboMind's online int8 KV quantization (quant_policy 8).
  lmdeploy: { int8: '--quant-policy 8' },
  trtllm: { fp8: TRTLLM_FP8 },
  triton: { fp8: TRTLLM_FP8 },
  // llama.cpp's q8_0 cache: 8-bit integers with a scale per 32 values.
  llamacpp: { int8: '--cache-type-k q8_0 --cache-type-v q8_0' },
};

/** The launch flags for this KV-cache type ('' for auto); undefined when the engine offers none. */
export function kvCacheLaunchFlags(engine: string, dtype: KvCacheDtype | undefined): string | undefined {
  if (dtype === undefined || dtype === 'auto') return '';
  return KV_CACHE_LAUNCH[engine]?.[dtype];
}

/** Why a candidate on this engine cannot have this KV-cache type; undefined when it can. */
export function kvCacheUnsupported(engine: string, dtype: KvCacheDtype | undefined): string | undefined {
  if (kvCacheLaunchFlags(engine, dtype) !== undefined) return undefined;
  const engines = Object.keys(KV_CACHE_LAUNCH).filter((e) => KV_CACHE_LAUNCH[e]?.[dtype as 'fp8' | 'int8'] !== undefined);
  return `${engine} has no ${dtype} KV-cache option to launch with (engines that have one: ${engines.join(', ')})`;
}
