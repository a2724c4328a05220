import { configError } from '../../core/errors.js';
import type { HardwareSpec } from '../catalog/types.js';

export type EngineId =
  | 'vllm-0.2' | 'vllm-v0' | 'vllm-v1' | 'sglang' | 'lmdeploy' | 'tgi' | 'triton' | 'llamacpp' | 'ollama';

/**
 * How an engine schedules and what its kernels look like. Calibrated constants (host costs, API time)
 * come from the calibration file under `calKey`.
 */
export interface EngineProfile {
  id: EngineId;
  label: string;
  aliases: string[];
  /**
   * prompt-first: a step is either prefill-only (new prompts, decodes stall) or decode-only (vLLM V0, TGI, SGLang).
   * mixed: running requests first, then waiting ones, prefill chunks and decodes in one pass (vLLM V1, lmdeploy).
   */
  policy: 'prompt-first' | 'mixed';
  maxNumSeqs: (hw: HardwareSpec) => number;
  maxNumBatchedTokens: (maxModelLen: number, hw: HardwareSpec) => number;
  /** Prompt-first engines that split a long prompt across prefill steps (SGLang chunked prefill). */
  chunkedPrefill: boolean;
  /** vLLM 0.2 pads every prompt of a prefill batch to the longest one. */
  padPrompts: boolean;
  maxPaddings: number;
  /** TGI 1.x reserves KV for prompt + max_new_tokens at admission (it never preempts). */
  reserveFullOutput: boolean;
  /** Fraction of KV blocks kept free when admitting prompts. */
  watermark: number;
  /** Paged-attention bandwidth efficiency and GQA re-read exponent (old kernels re-read KV per query head). */
  pagedAttnBw: number;
  gqaGamma: number;
  /** Eager mode (no CUDA graphs): per-layer kernel-launch floor. */
  eager?: { kernelsPerLayer: number; launchUs: number };
  /** Host work overlaps the GPU step (async scheduling / C++ engines). */
  overlapHost: boolean;
  /** Share of t_api spent before the request reaches the scheduler (the rest delays each emitted token). */
  ingestShare: number;
  calKey: string;
  quantFamily: 'legacy' | 'modern';
  /** Fitted on seed data (false: priors only). */
  calibrated: boolean;
}

const bigGpu = (hw: HardwareSpec): boolean => hw.memGiB >= 70 && !hw.name.startsWith('A100');

const base = {
  chunkedPrefill: false, padPrompts: false, maxPaddings: Infinity, reserveFullOutput: false, watermark: 0.01,
  pagedAttnBw: 1, gqaGamma: 0, overlapHost: false, ingestShare: 0.5, quantFamily: 'modern' as const,
};

export const ENGINE_PROFILES: EngineProfile[] = [
  {
    ...base, id: 'vllm-0.2', label: 'vLLM 0.2.x (prompt-first, padded, eager)', aliases: ['vllm-legacy', 'vllm-0.2.x', 'vllm-v0.2', 'vllm-0.1'],
    policy: 'prompt-first', maxNumSeqs: () => 256, maxNumBatchedTokens: (len) => Math.max(len, 2048),
    padPrompts: true, maxPaddings: 256, pagedAttnBw: 0.43, gqaGamma: 0.4,
    eager: { kernelsPerLayer: 14, launchUs: 7 }, calKey: 'vllm-0.2', quantFamily: 'legacy', calibrated: true,
  },
  {
    ...base, id: 'vllm-v0', label: 'vLLM 0.4-0.6 (V0, CUDA graphs)', aliases: ['vllm-0.4', 'vllm-0.5', 'vllm-0.6', 'vllm-v0.6'],
    policy: 'prompt-first', maxNumSeqs: () => 256, maxNumBatchedTokens: (len) => Math.max(len, 2048),
    calKey: 'vllm-v0', calibrated: true,
  },
  {
    ...base, id: 'vllm-v1', label: 'vLLM V1 (token budget, chunked prefill)', aliases: ['vllm', 'vllm-latest', 'vllm-0.8', 'vllm-0.10'],
    policy: 'mixed', maxNumSeqs: (hw) => (bigGpu(hw) ? 1024 : 256),
    maxNumBatchedTokens: (_len, hw) => (bigGpu(hw) ? 8192 : 2048), overlapHost: true, calKey: 'vllm-v1', calibrated: false,
  },
  {
    ...base, id: 'sglang', label: 'SGLang (prefill-first, chunked prefill)', aliases: ['sgl'],
    policy: 'prompt-first', chunkedPrefill: true, maxNumSeqs: () => 1024, maxNumBatchedTokens: () => 8192,
    calKey: 'sglang', calibrated: true,
  },
  {
    ...base, id: 'lmdeploy', label: 'lmdeploy TurboMind (mixed batches)', aliases: ['turbomind'],
    policy: 'mixed', maxNumSeqs: () => 256, maxNumBatchedTokens: () => 8192, overlapHost: true,
    calKey: 'lmdeploy', calibrated: true,
  },
  {
    ...base, id: 'tgi', label: 'TGI 1.x (prefill-first, reserves full output)', aliases: ['text-generation-inference', 'tgi-1'],
    policy: 'prompt-first', chunkedPrefill: false, maxNumSeqs: () => 1024, maxNumBatchedTokens: () => 4096,
    reserveFullOutput: true, calKey: 'tgi', quantFamily: 'legacy', calibrated: true,
  },
  {
    ...base, id: 'triton', label: 'Triton / TensorRT-LLM (in-flight batching)', aliases: ['trtllm', 'tensorrt-llm'],
    policy: 'mixed', maxNumSeqs: () => 256, maxNumBatchedTokens: () => 8192, overlapHost: true, calKey: 'triton', calibrated: false,
  },
  {
    ...base, id: 'llamacpp', label: 'llama.cpp server (4 slots, unified batch)', aliases: ['llama.cpp', 'llama-cpp'],
    policy: 'mixed', maxNumSeqs: () => 4, maxNumBatchedTokens: () => 2048, calKey: 'llamacpp', calibrated: false,
  },
  {
    ...base, id: 'ollama', label: 'Ollama (llama.cpp, 4 parallel)', aliases: [],
    policy: 'mixed', maxNumSeqs: () => 4, maxNumBatchedTokens: () => 2048, calKey: 'llamacpp', calibrated: false,
  },
];

export function findEngineProfile(name: string): EngineProfile {
  const key = name.trim().toLowerCase();
  for (const p of ENGINE_PROFILES) if (p.id === key || p.aliases.includes(key)) return p;
  throw configError(
    `unknown engine "${name}"`,
    `known engines: ${ENGINE_PROFILES.map((p) => [p.id, ...p.aliases].join('|')).join(', ')}`,
  );
}
