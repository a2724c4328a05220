import type { GgufQuantName, QuantSpec } from './types.js';

/**
 * llama.cpp's GGUF weight types, in bytes per weight including their block scales.
 * - Q4_0, Q8_0: fixed blocks of 32 weights (ggml/src/ggml-common.h: block_q4_0 = one fp16 scale + 16 bytes = 18
 *   bytes, 4.5 bits per weight; block_q8_0 = fp16 scale + 32 bytes = 34 bytes, 8.5 bits).
 * - Q4_K_M, Q5_K_M, Q6_K: llama-quantize's mixes (K_M keeps some attention-V and FFN-down tensors at Q6_K), so the
 *   bits per weight depend a little on the model; the figures are llama.cpp's own table for Llama 2 7B
 *   (tools/quantize/README.md: Q4_K_M 4.84, Q5_K_M 5.68, Q6_K 6.56 bits per weight).
 * - F32: the unquantized file (4 bytes), e.g. scripts/llamacpp/make-tiny-gguf.ts's test models. F16 is `fp16`.
 */
export const GGUF_QUANTS: Record<GgufQuantName, QuantSpec> = {
  Q4_0: { name: 'Q4_0', bytesPerWeight: 18 / 32 },
  Q4_K_M: { name: 'Q4_K_M', bytesPerWeight: 4.84 / 8 },
  Q5_K_M: { name: 'Q5_K_M', bytesPerWeight: 5.68 / 8 },
  Q6_K: { name: 'Q6_K', bytesPerWeight: 6.56 / 8 },
  Q8_0: { name: 'Q8_0', bytesPerWeight: 34 / 32 },
  F32: { name: 'F32', bytesPerWeight: 4 },
};

/** Lookup keys (lower case, punctuation dropped, as parseQuant normalises) of the GGUF names. */
export const GGUF_QUANT_ALIASES: Record<string, GgufQuantName> = {
  q40: 'Q4_0', q4km: 'Q4_K_M', q4k: 'Q4_K_M', q5km: 'Q5_K_M', q5k: 'Q5_K_M', q6k: 'Q6_K', q80: 'Q8_0', f32: 'F32', fp32: 'F32', float32: 'F32',
};

/** GGUF file names carry the type as the last part: `Llama-3.2-1B-Instruct-Q4_K_M.gguf`, `llama-2-7b.Q8_0.gguf`. */
export const GGUF_NAME_SUFFIX = /[-_.](q4_0|q4_k_m|q4_k|q5_k_m|q5_k|q6_k|q8_0|f16|bf16|f32)$/i;

export function isGgufQuant(q: string): q is GgufQuantName {
  return q in GGUF_QUANTS;
}
