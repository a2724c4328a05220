import { configError } from '../../core/errors.js';
import { deriveModel } from '../catalog/models.js';
import type { HardwareSpec, ModelSpec } from '../catalog/types.js';
import type { SimEngineKind } from '../wire/types.js';

export type EngineId =
  | 'vllm-0.2' | 'vllm-v0' | 'vllm-v1' | 'sglang' | 'lmdeploy' | 'tgi' | 'trtllm' | 'triton' | 'mlc-llm' | 'llamacpp' | 'ollama';

/**
 * How an engine schedules and what its kernels look like. Calibrated constants (host costs, API time)
 * come from the calibration file under `calKey`.
 */
export interface EngineProfile {
  id: EngineId;
  /** The name the CLI lists (`--engine`); `id` and `aliases` are accepted too. */
  name: string;
  label: string;
  aliases: string[];
  /** Which HTTP API `inferbench sim` speaks for this engine. */
  wire: SimEngineKind;
  /**
   * prompt-first: a step is either prefill-only (new prompts, decodes stall) or decode-only (vLLM V0, SGLang).
   * mixed: running requests first, then waiting ones, prefill chunks and decodes in one pass (vLLM V1, lmdeploy, TGI 3).
   */
  policy: 'prompt-first' | 'mixed';
  maxNumSeqs: (hw: HardwareSpec) => number;
  maxNumBatchedTokens: (maxModelLen: number, hw: HardwareSpec, model: ModelSpec, tp: number) => number;
  /** Prompt-first engines that split a long prompt across prefill steps (SGLang chunked prefill). */
  chunkedPrefill: boolean;
  /** vLLM 0.2 pads every prompt of a prefill batch to the longest one. */
  padPrompts: boolean;
  maxPaddings: number;
  /** TGI reserves KV for the prompt plus the output it may generate at admission (no preemption within a reservation). */
  reserveFullOutput: boolean;
  /**
   * With reserveFullOutput: the output is reserved this many tokens at a time (TGI 3 schedules
   * max_new_tokens in DEFAULT_GENERATION_LENGTH = 1024-token segments). Infinity: all of it at once.
   */
  reserveSegment: number;
  /** The context limit is lowered to what the KV cache holds (TGI 3: max_total_tokens defaults to min(KV, context)). */
  contextFromKv: boolean;
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
  /**
   * The KV cache takes this fraction of the memory left after weights and activations (TensorRT-LLM's
   * kv_cache_free_gpu_mem_fraction), instead of `gpuMemoryUtilization` × total − weights − activations (vLLM);
   * `gpuMemoryUtilization`, when given, then sets this fraction.
   */
  kvFreeFraction?: number;
  /**
   * Automatic prefix caching is on by default (vLLM V1's enable_prefix_caching, SGLang's radix cache): full
   * 16-token prompt blocks are shared by hash. `--no-prefix-caching` turns it off.
   */
  prefixCaching: boolean;
  /**
   * vLLM V0 from 0.5.4 on turns chunked prefill on by itself when the context exceeds `above` tokens (32K), so that
   * its memory profiling pass does not prefill a whole context: scheduling is then mixed (decodes first, prompt
   * chunks after) under `tokens` batched tokens (512). The `chunkedPrefill` engine option overrides the default.
   */
  longContextChunk?: { above: number; tokens: number };
}

/**
 * vLLM V1's batch defaults for its API server (vllm/engine/arg_utils.py `get_batch_defaults`, vllm-project/vllm):
 * on a GPU of ≥ 70 GiB whose name does not contain "a100" (H100 SXM/PCIe/NVL, H200, H20, GH200) max_num_seqs 1024
 * and max_num_batched_tokens 8192, else 256 and 2048 (A100 excluded by name: vLLM PR #17885).
 */
const bigGpu = (hw: HardwareSpec): boolean => hw.memGiB >= 70 && !hw.name.startsWith('A100');

const base = {
  chunkedPrefill: false, padPrompts: false, maxPaddings: Infinity, reserveFullOutput: false, reserveSegment: Infinity,
  contextFromKv: false, watermark: 0.01, prefixCaching: false,
  pagedAttnBw: 1, gqaGamma: 0, overlapHost: false, ingestShare: 0.5, quantFamily: 'modern' as const,
};

/**
 * TGI 3 launcher default for --max-batch-prefill-tokens: the GPUs' fp16 peak over the model's forward
 * FLOPs per token (its `compute_optimal`, ignored when ≤ 100), else 4096, capped at the context length.
 */
function tgiMaxBatchPrefillTokens(maxModelLen: number, hw: HardwareSpec, model: ModelSpec, tp: number): number {
  const hd = model.headDim;
  const attn = 2 * hd * model.hidden * (4 * model.heads + 2 * model.kvHeads);
  const ffn = model.moe ? deriveModel(model).ffnActive : model.ffn;
  const flopPerToken = model.layers * (attn + 6 * model.hidden * ffn);
  const optimal = Math.floor((hw.tflops * 1e12 * tp) / flopPerToken);
  return Math.min(optimal > 100 ? optimal : 4096, maxModelLen);
}

/**
 * SGLang 0.5 default --chunked-prefill-size by GPU memory (server_args `_handle_gpu_memory_settings`):
 * a longer prompt is prefilled over several steps of at most this many tokens.
 */
function sglangChunkedPrefillSize(_len: number, hw: HardwareSpec): number {
  if (hw.memGiB < 35) return 2048;
  if (hw.memGiB < 60) return 4096;
  return hw.memGiB < 160 ? 8192 : 16384;
}

/**
 * LMDeploy's default --max-batch-size by GPU (lmdeploy/utils.py `get_max_batch_size`, InternLM/lmdeploy; its
 * benchmark README lists the defaults): before v0.10.0 A100/A800 256, H100/H800 512, every other GPU 128 (the
 * device name is matched by substring, so an L20, L40S or RTX card gets 128). v0.10.0 raised A100 to 512 and
 * H100/H20 to 1024, H200 to 1280; the profile spans 0.1–0.5 (the published tables' releases), so the older map.
 */
export function lmdeployMaxBatchSize(hw: HardwareSpec): number {
  const n = hw.name.toLowerCase();
  if (n.startsWith('a100')) return 256;
  if (n.startsWith('h100')) return 512;
  return 128;
}

export const ENGINE_PROFILES: EngineProfile[] = [
  {
    ...base, id: 'vllm-v1', name: 'vllm', wire: 'vllm', label: 'vLLM V1 (token budget, chunked prefill)', aliases: ['vllm', 'vllm-latest', 'vllm-0.8', 'vllm-0.10'],
    policy: 'mixed', maxNumSeqs: (hw) => (bigGpu(hw) ? 1024 : 256),
    maxNumBatchedTokens: (_len, hw) => (bigGpu(hw) ? 8192 : 2048), overlapHost: true, calKey: 'vllm-v1', calibrated: true,
    prefixCaching: true,
  },
  {
    ...base, id: 'vllm-0.2', name: 'vllm-legacy', wire: 'vllm-legacy', label: 'vLLM 0.2.x (prompt-first, padded, eager)', aliases: ['vllm-legacy', 'vllm-0.2.x', 'vllm-v0.2', 'vllm-0.1'],
    policy: 'prompt-first', maxNumSeqs: () => 256, maxNumBatchedTokens: (len) => Math.max(len, 2048),
    padPrompts: true, maxPaddings: 256, pagedAttnBw: 0.43, gqaGamma: 0.4,
    eager: { kernelsPerLayer: 14, launchUs: 7 }, calKey: 'vllm-0.2', quantFamily: 'legacy', calibrated: true,
  },
  {
    ...base, id: 'vllm-v0', name: 'vllm-v0', wire: 'vllm', label: 'vLLM 0.4-0.6 (V0, CUDA graphs)', aliases: ['vllm-0.4', 'vllm-0.5', 'vllm-0.6', 'vllm-v0.6'],
    policy: 'prompt-first', maxNumSeqs: () => 256, maxNumBatchedTokens: (len) => Math.max(len, 2048),
    calKey: 'vllm-v0', calibrated: true, longContextChunk: { above: 32768, tokens: 512 },
  },
  {
    // TGI 3.x, the release the sim's HTTP API speaks (wire/tgi.ts). Its V3 router prefills a new chunk
    // concatenated with the running decode batch under max_batch_prefill_tokens (mixed batches), reserves
    // prompt + the next 1024-token output segment in its block allocator, and validates against
    // max_total_tokens. Host constants are fitted on TGI 1.3.4 rows (the only published TGI table).
    ...base, id: 'tgi', name: 'tgi', wire: 'tgi', label: 'TGI 3.x (chunked prefill, reserves prompt + output)',
    aliases: ['text-generation-inference', 'tgi-3'],
    policy: 'mixed', chunkedPrefill: true, maxNumSeqs: () => 1024, maxNumBatchedTokens: tgiMaxBatchPrefillTokens,
    reserveFullOutput: true, reserveSegment: 1024, contextFromKv: true, calKey: 'tgi', quantFamily: 'legacy', calibrated: true,
  },
  {
    ...base, id: 'sglang', name: 'sglang', wire: 'sglang', label: 'SGLang (prefill-first, chunked prefill)', aliases: ['sgl'],
    policy: 'prompt-first', chunkedPrefill: true, maxNumSeqs: () => 1024, maxNumBatchedTokens: sglangChunkedPrefillSize,
    calKey: 'sglang', calibrated: true, prefixCaching: true,
  },
  {
    ...base, id: 'lmdeploy', name: 'lmdeploy', wire: 'lmdeploy', label: 'lmdeploy TurboMind (mixed batches)', aliases: ['turbomind'],
    policy: 'mixed', maxNumSeqs: lmdeployMaxBatchSize, maxNumBatchedTokens: () => 8192, overlapHost: true,
    calKey: 'lmdeploy', calibrated: true,
  },
  {
    ...base, id: 'llamacpp', name: 'llamacpp', wire: 'llamacpp', label: 'llama.cpp server (4 slots, unified batch)', aliases: ['llama.cpp', 'llama-cpp'],
    policy: 'mixed', maxNumSeqs: () => 4, maxNumBatchedTokens: () => 2048, calKey: 'llamacpp', calibrated: false,
  },
  {
    // TensorRT-LLM's own OpenAI-compatible server (trtllm-serve; also trtllm-bench's in-process runs):
    // in-flight batching with mixed context/generation steps under max_num_tokens (8192), C++ executor
    // overlapping host work. Its default capacity scheduler (GUARANTEED_NO_EVICT) reserves KV for the
    // prompt plus the whole max output at admission, so it never preempts. max_batch_size 2048 (trtllm-serve's
    // default) on ≥70 GiB GPUs, 256 below.
    ...base, id: 'trtllm', name: 'trtllm', wire: 'vllm', label: 'TensorRT-LLM (trtllm-serve, in-flight batching)',
    aliases: ['tensorrt-llm', 'trt-llm', 'trtllm-serve', 'trtllm-bench'],
    policy: 'mixed', maxNumSeqs: (hw) => (hw.memGiB >= 70 ? 2048 : 256), maxNumBatchedTokens: () => 8192,
    reserveFullOutput: true, overlapHost: true, calKey: 'trtllm', calibrated: true, kvFreeFraction: 0.9,
  },
  {
    // A TensorRT-LLM engine behind Triton's tensorrtllm_backend (its generate_stream API). Engines built by
    // `trtllm-bench build` (as NVIDIA's perf overview builds them) get a runtime batch of thousands (its example
    // prints "Max Runtime Batch Size: 4096"): 2048 on ≥70 GiB GPUs as for trtllm-serve, 256 below. The C++ batch
    // manager of these releases (0.x) schedules and hands every streamed token to Triton between steps, on the
    // step's critical path (the overlap scheduler came with the PyTorch backend): host time adds to each step, with
    // its own constants (T02's ITL grows with the offered rate 1.5–2× faster than an overlapped host allows).
    ...base, id: 'triton', name: 'triton', wire: 'triton', label: 'Triton / TensorRT-LLM (in-flight batching)', aliases: ['triton-trtllm', 'tensorrtllm-backend'],
    policy: 'mixed', maxNumSeqs: (hw) => (hw.memGiB >= 70 ? 2048 : 256), maxNumBatchedTokens: () => 8192, overlapHost: false, calKey: 'triton', calibrated: true,
  },
  {
    // MLC-LLM's OpenAI-compatible `mlc_llm serve` (continuous batching, 2048-token prefill chunks).
    ...base, id: 'mlc-llm', name: 'mlc-llm', wire: 'vllm', label: 'MLC-LLM serve (continuous batching)', aliases: ['mlc', 'mlc_llm', 'mlcllm'],
    policy: 'mixed', maxNumSeqs: () => 128, maxNumBatchedTokens: () => 2048, overlapHost: false, calKey: 'mlc-llm', calibrated: true,
  },
  {
    ...base, id: 'ollama', name: 'ollama', wire: 'ollama', label: 'Ollama (llama.cpp, 4 parallel)', aliases: [],
    policy: 'mixed', maxNumSeqs: () => 4, maxNumBatchedTokens: () => 2048, calKey: 'llamacpp', calibrated: false,
  },
];

/** Every engine name the CLI lists, for `sim`, `run` and `predict` alike. */
export const SIM_ENGINE_NAMES: readonly string[] = ENGINE_PROFILES.map((p) => p.name);

export function findEngineProfile(name: string): EngineProfile {
  const key = name.trim().toLowerCase();
  for (const p of ENGINE_PROFILES) if (p.id === key || p.name === key || p.aliases.includes(key)) return p;
  throw configError(
    `unknown engine "${name}"`,
    `known engines: ${ENGINE_PROFILES.map((p) => [...new Set([p.name, p.id, ...p.aliases])].join('|')).join(', ')}`,
  );
}
