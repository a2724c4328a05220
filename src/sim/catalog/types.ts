/** Architecture, hardware and quantization descriptions the cost model reads. */

export interface MoeSpec {
  experts: number;
  activeExperts: number;
  expertFfn: number;
  /** Width of the always-on shared expert MLP (0 = none). */
  sharedExpertFfn: number;
  /**
   * How many of the layers are MoE layers (default: all). The others carry a dense MLP of width `denseFfn`
   * (Llama-4 interleaves MoE and dense layers; DeepSeek-V2 keeps its first layer dense).
   */
  moeLayers?: number;
  denseFfn?: number;
}

export interface ModelSpec {
  name: string;
  aliases?: string[];
  layers: number;
  hidden: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  /** Per-matrix FFN width of the gated MLP (dense models; ignored when `moe` is set). */
  ffn: number;
  vocab: number;
  tiedEmbeddings: boolean;
  maxModelLen: number;
  moe?: MoeSpec;
  /**
   * Multi-head latent attention (DeepSeek-V2/V3): the KV cache keeps one compressed vector of this many
   * elements per token per layer (kv_lora_rank + qk_rope_head_dim), replicated on every TP rank.
   */
  kvLatentDim?: number;
  /** Vision-language models: how images become prompt tokens, and the vision encoder's size. Absent: text only. */
  vision?: VisionSpec;
  source?: string;
}

/**
 * How a vision-language model turns one image into prompt tokens (sim/wire/vision.ts counts them), and what its vision
 * encoder costs: `encoderParams` (bf16 ViT and projector) run over each of the image's patches, ~2 FLOPs per parameter.
 */
export type VisionSpec =
  /** Qwen2-VL / Qwen2.5-VL: smart_resize to multiples of patch·merge within [minPixels, maxPixels], one token per merge² patches. */
  | { kind: 'qwen2-vl'; encoderParams: number; patchSize: number; mergeSize: number; minPixels: number; maxPixels: number; extraTokens: number }
  /** A fixed grid whatever the size (LLaVA-1.5: 336² → 576; Gemma 3: 896² → 4096 patches pooled to 256 tokens). */
  | { kind: 'fixed'; encoderParams: number; tokens: number; patches: number; extraTokens: number }
  /** LLaVA-NeXT (v1.6) anyres: the base 336² view plus the best grid of 336² tiles, unpadded, with a newline per row. */
  | { kind: 'llava-next'; encoderParams: number; crop: number; patchSize: number; pinpoints: ReadonlyArray<readonly [number, number]> };

export type LinkKind = 'nvlink' | 'pcie' | 'pcie-no-p2p';

export interface HardwareSpec {
  name: string;
  aliases?: string[];
  /** Dense fp16/bf16 tensor peak. */
  tflops: number;
  /** Dense FP8 tensor peak (Hopper, Ada); absent on GPUs without FP8 tensor cores (FP8 weights then run as W8A16). */
  fp8Tflops?: number;
  /** Memory per GPU in GiB. */
  memGiB: number;
  bwGBs: number;
  link: LinkKind;
  /**
   * GPUs joined by `link` in groups of this many (H100 NVL: NVLink bridges join pairs); tensor parallelism over more
   * GPUs than that crosses PCIe, and its all-reduces take the PCIe link's constants. Absent: every GPU of the node.
   */
  nvlinkGroup?: number;
  /** Calibration key for efficiencies; defaults to `name`. */
  calibrationKey?: string;
  /**
   * A CPU rather than a GPU (sim/catalog/cpu.ts): `tflops` is its peak matmul rate, `bwGBs` its socket's DRAM
   * bandwidth, `memGiB` the RAM the deployment has; one device only (no tensor parallelism).
   */
  cpu?: { cores: number };
  source?: string;
  /**
   * Board power of one GPU (sim/engine/power.ts): `maxW` the vendor's maximum board power (TDP), `idleW` what it
   * draws idle with a model loaded (clocks down, memory kept). Absent: the simulator reports no energy for it.
   */
  power?: { idleW: number; maxW: number; source: string };
}

/** GGUF weight types as llama.cpp names them (`llama-quantize`'s type names; F32 is the unquantized file). */
export type GgufQuantName = 'Q4_0' | 'Q4_K_M' | 'Q5_K_M' | 'Q6_K' | 'Q8_0' | 'F32';

export type QuantName = 'fp16' | 'bf16' | 'awq' | 'gptq-int4' | 'gptq-int8' | 'fp8' | GgufQuantName;

/** Element type of the KV cache: `auto` = the activations' 16-bit type; fp8/int8 halve its bytes. */
export type KvCacheDtype = 'auto' | 'fp8' | 'int8';

export interface QuantSpec {
  name: QuantName;
  /** Weight bytes per parameter including scales/zeros (g128). */
  bytesPerWeight: number;
}

/** Parameter counts derived from a ModelSpec (per whole model, not per GPU). */
export interface ModelDerived {
  attnParamsPerLayer: number;
  /** Dense MLP params per layer (for MoE: shared expert + router only). */
  mlpParamsPerLayer: number;
  /** All routed-expert params per layer (0 for dense). */
  expertParamsPerLayer: number;
  embeddingParams: number;
  headParams: number;
  totalParams: number;
  /** FFN width active per token (for element-wise and activation estimates). */
  ffnActive: number;
}
