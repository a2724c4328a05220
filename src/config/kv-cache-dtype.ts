/**
 * `--kv-cache-dtype auto|fp8|int8` (predict, sim, plan, and run's built-in simulator): the element type of the
 * simulated engine's KV cache. Absent, the model decides (an NVIDIA ModelOpt `nvidia/…-FP8` checkpoint → fp8,
 * else auto = the weights' 16-bit type); the simulator's memory and attention cost models do the rest.
 */
import { KV_CACHE_DTYPES, parseKvCacheDtype } from '../sim/catalog/hardware.js';
import type { KvCacheDtype } from '../sim/catalog/types.js';
import type { Problems } from './parse.js';

/** The help text, the same words in every command that takes the flag. */
export const KV_CACHE_DTYPE_HELP = {
  flag: '--kv-cache-dtype <t>',
  text: "KV-cache element type: auto (the weights' 16-bit type) | fp8 | int8 — as vLLM/SGLang --kv-cache-dtype fp8, lmdeploy --quant-policy 8",
  shown: 'from the model: fp8 for nvidia/…-FP8 checkpoints, else auto',
} as const;

/**
 * The flag's value as the simulator names it (engine spellings such as fp8_e4m3 or fp16 are accepted); a bad value
 * is one problem naming the known values. Undefined when the flag was not given: the model's implied type applies.
 */
export function parseKvCacheDtypeFlag(raw: string | undefined, p: Problems): KvCacheDtype | undefined {
  if (raw === undefined) return undefined;
  const dtype = parseKvCacheDtype(raw);
  if (!dtype) p.push(`--kv-cache-dtype ${JSON.stringify(raw)} is not known; choose one of: ${KV_CACHE_DTYPES.join(', ')}`);
  return dtype;
}

/** ", fp8 KV cache" for a description line; nothing for the 16-bit default. */
export function kvCacheSuffix(dtype: KvCacheDtype): string {
  return dtype === 'auto' ? '' : `, ${dtype} KV cache`;
}
