import { GGUF_QUANTS, GGUF_QUANT_ALIASES, isGgufQuant } from './gguf-quants.js';
import type { HardwareSpec, KvCacheDtype, LinkKind, QuantName, QuantSpec } from './types.js';

/**
 * Datasheet figures (research/simulator.md §4). Efficiencies live in the calibration file. Memory is the
 * nominal size the vendor prints (the seed fit was made with that convention); `fp8Tflops` only where the
 * GPU has FP8 tensor cores (Hopper, Ada). `power`: the maximum board power (TDP) is the vendor's datasheet or spec
 * page figure; datasheets print no idle draw, so `idleW` is what nvidia-smi reads on an idle board with a model loaded
 * (the figures below say where each comes from). docs/energy.md checks the power model built on them.
 */
export const BUILTIN_HARDWARE: HardwareSpec[] = [
  {
    name: 'A100-40GB', aliases: ['A100', 'A100-40G', 'A100-SXM4-40GB', 'A100-40GB-SXM4', 'A100-PCIe-40GB'],
    tflops: 312, memGiB: 40, bwGBs: 1555, link: 'nvlink', source: 'NVIDIA A100 datasheet',
    power: { idleW: 55, maxW: 400, source: 'A100 datasheet: 400 W max TDP (SXM4); idle ≈ 55 W as nvidia-smi reads an idle SXM4 board' },
  },
  {
    name: 'A100-80GB',
    aliases: ['A100-80G', 'A100-SXM4-80GB', 'A100-80GB-SXM4', 'A100-80GB-SXM', 'A100-SXM-80GB', 'A100-PCIe-80GB'],
    tflops: 312, memGiB: 80, bwGBs: 2039, link: 'nvlink', source: 'NVIDIA A100 datasheet',
    power: { idleW: 62, maxW: 400, source: 'A100 datasheet: 400 W max TDP (SXM4); idle 62 W measured on an idle A100-SXM4-80GB (chuyishang/inference-energy results)' },
  },
  {
    name: 'A10', aliases: ['A10-24GB', 'NVIDIA-A10'],
    tflops: 125, memGiB: 24, bwGBs: 600, link: 'pcie', source: 'NVIDIA A10 datasheet (dense FP16 tensor)',
    power: { idleW: 20, maxW: 150, source: 'A10 datasheet: 150 W max TDP; idle ≈ 20 W (nvidia-smi on an idle board, P8)' },
  },
  {
    name: 'L20-48GB', aliases: ['L20', 'L20-48G'],
    tflops: 119.5, fp8Tflops: 239, memGiB: 48, bwGBs: 864, link: 'pcie', source: 'L20 spec pages (medium confidence)',
    power: { idleW: 30, maxW: 275, source: 'L20 spec pages: 275 W max power; idle ≈ 30 W (estimate, as L40S-class PCIe boards)' },
  },
  {
    name: 'L4', aliases: ['L4-24GB'],
    tflops: 121, fp8Tflops: 242.5, memGiB: 24, bwGBs: 300, link: 'pcie', source: 'NVIDIA L4 datasheet (dense)',
    power: { idleW: 16, maxW: 72, source: 'L4 datasheet: 72 W max TDP; idle ≈ 16 W (nvidia-smi on an idle board)' },
  },
  {
    name: 'L40S', aliases: ['L40S-48GB'],
    tflops: 362, fp8Tflops: 733, memGiB: 48, bwGBs: 864, link: 'pcie', source: 'NVIDIA L40S datasheet',
    power: { idleW: 35, maxW: 350, source: 'L40S datasheet: 350 W max power; idle ≈ 35 W (nvidia-smi on an idle board)' },
  },
  {
    // H100 SXM5 (HGX/DGX boards): what "H100" has always meant here. NVIDIA H100 Tensor Core GPU datasheet, SXM column:
    // 989 TFLOPS dense BF16/FP16 (1,979 with sparsity), 1,979 dense FP8, 80 GB HBM3 at 3.35 TB/s, up to 700 W,
    // NVLink 900 GB/s (NVSwitch: every GPU of the board reaches every other one).
    name: 'H100',
    aliases: ['H100-SXM', 'H100-SXM5', 'H100-80GB', 'H100-SXM5-80GB', 'H100-SXM-80GB', 'H100-80GB-SXM', 'H100-80GB-HBM3'],
    tflops: 989, fp8Tflops: 1979, memGiB: 80, bwGBs: 3350, link: 'nvlink', source: 'NVIDIA H100 datasheet (SXM)',
    power: { idleW: 70, maxW: 700, source: 'H100 datasheet: up to 700 W max TDP (SXM5); idle ≈ 70 W (nvidia-smi on an idle HGX H100 board)' },
  },
  {
    // H100 PCIe (the 2022 card): lower clocks and power, HBM2e. Datasheet PCIe column: 756 TFLOPS dense BF16/FP16
    // (1,513 with sparsity), 1,513 dense FP8, 80 GB HBM2e at 2.0 TB/s, 300–350 W; PCIe Gen5 (an optional NVLink
    // bridge joins two cards; without one, tensor parallelism runs over PCIe).
    name: 'H100-PCIe', aliases: ['H100-PCIe-80GB', 'H100-PCIE', 'H100-80GB-PCIe'],
    tflops: 756, fp8Tflops: 1513, memGiB: 80, bwGBs: 2000, link: 'pcie', source: 'NVIDIA H100 datasheet (PCIe, dense)',
    power: { idleW: 50, maxW: 350, source: 'H100 datasheet: 300–350 W max TDP (PCIe); idle ≈ 50 W' },
  },
  {
    // H100 NVL (the 2023 PCIe card for LLM serving): datasheet NVL column: 835 TFLOPS dense BF16/FP16 (1,671 with
    // sparsity), 1,671 dense FP8, 94 GB HBM3 at 3.9 TB/s, 350–400 W configurable; NVLink bridges join cards in pairs
    // (600 GB/s), PCIe Gen5 between pairs: tensor parallelism above 2 GPUs crosses PCIe (`nvlinkGroup`).
    name: 'H100-NVL', aliases: ['H100-NVL-94GB', 'H100NVL', 'H100-94GB'],
    tflops: 835, fp8Tflops: 1671, memGiB: 94, bwGBs: 3900, link: 'nvlink', nvlinkGroup: 2, source: 'NVIDIA H100 datasheet (NVL, dense)',
    power: { idleW: 60, maxW: 400, source: 'H100 datasheet: 350–400 W configurable max TDP (NVL); idle ≈ 60 W (estimate, between the PCIe and SXM boards)' },
  },
  {
    name: 'H200', aliases: ['H200-141GB', 'H200-SXM-141GB', 'H200-SXM'],
    tflops: 989, fp8Tflops: 1979, memGiB: 141, bwGBs: 4800, link: 'nvlink', source: 'NVIDIA H200 datasheet',
    power: { idleW: 75, maxW: 700, source: 'H200 datasheet: up to 700 W max TDP (SXM); idle ≈ 75 W (as H100 SXM, the same board)' },
  },
  {
    // The 480 GB Grace Hopper superchip (GH200-480GB) pairs an H100-class GPU with 96 GB of HBM3.
    name: 'GH200', aliases: ['GH200-480GB', 'GH200-96GB'],
    tflops: 989, fp8Tflops: 1979, memGiB: 96, bwGBs: 4000, link: 'nvlink', source: 'NVIDIA GH200 datasheet (96 GB HBM3 GPU)',
    power: { idleW: 80, maxW: 700, source: 'GH200 datasheet: 450–1000 W module (CPU + GPU + memory), the GPU\'s share taken as H100 SXM\'s 700 W; idle ≈ 80 W' },
  },
  {
    name: 'H20', aliases: ['H20-96GB'],
    tflops: 148, fp8Tflops: 296, memGiB: 96, bwGBs: 4000, link: 'nvlink', source: 'NVIDIA H20 product brief (dense)',
    power: { idleW: 60, maxW: 400, source: 'H20 product brief: 400 W max TDP; idle ≈ 60 W (estimate)' },
  },
  {
    name: 'RTX-3090', aliases: ['3090', 'RTX3090', 'RTX-3090-24GB', 'GeForce-RTX-3090'],
    tflops: 71, memGiB: 24, bwGBs: 936, link: 'pcie-no-p2p', source: 'Ampere GA102 whitepaper (FP16 tensor, FP32 accumulate)',
    power: { idleW: 25, maxW: 350, source: 'GeForce RTX 3090 spec page: 350 W total graphics power; idle ≈ 25 W' },
  },
  {
    name: 'RTX-4090', aliases: ['4090', 'RTX4090', 'RTX-4090-24GB', 'GeForce-RTX-4090'],
    tflops: 165.2, fp8Tflops: 330.3, memGiB: 24, bwGBs: 1008, link: 'pcie-no-p2p', source: 'Ada whitepaper via waredb.com',
    power: { idleW: 25, maxW: 450, source: 'GeForce RTX 4090 spec page: 450 W total graphics power; idle ≈ 25 W' },
  },
];

/** Prior link constants (all-reduce latency and effective bus bandwidth) per link kind. */
export const LINK_PRIORS: Record<LinkKind, { alphaUs: number; betaGBs: number }> = {
  nvlink: { alphaUs: 10, betaGBs: 150 },
  pcie: { alphaUs: 20, betaGBs: 20 },
  'pcie-no-p2p': { alphaUs: 35, betaGBs: 10 },
};

export const QUANTS: Record<QuantName, QuantSpec> = {
  fp16: { name: 'fp16', bytesPerWeight: 2 },
  bf16: { name: 'bf16', bytesPerWeight: 2 },
  awq: { name: 'awq', bytesPerWeight: 0.53 },
  'gptq-int4': { name: 'gptq-int4', bytesPerWeight: 0.53 },
  'gptq-int8': { name: 'gptq-int8', bytesPerWeight: 1.03 },
  // Per-tensor or per-channel scales: negligible next to the weights.
  fp8: { name: 'fp8', bytesPerWeight: 1 },
  ...GGUF_QUANTS,
};

const QUANT_ALIASES: Record<string, QuantName> = {
  fp16: 'fp16', float16: 'fp16', half: 'fp16', bf16: 'bf16', bfloat16: 'bf16', auto: 'fp16', none: 'fp16',
  awq: 'awq', awqint4: 'awq', int4: 'gptq-int4', gptq: 'gptq-int4', gptqint4: 'gptq-int4', w4a16: 'gptq-int4',
  // MLC-LLM's 4-bit group quantization with fp16 scales (W4A16).
  q4f161: 'gptq-int4', q4f16: 'gptq-int4',
  gptqint8: 'gptq-int8', int8: 'gptq-int8',
  fp8: 'fp8', float8: 'fp8', fp8e4m3: 'fp8', fp8dynamic: 'fp8', w8a8fp8: 'fp8',
  // GGUF (llama.cpp): Q4_K_M, q4_k_m, Q8_0, F16 …
  f16: 'fp16', ...GGUF_QUANT_ALIASES,
};

/**
 * Bytes per parameter of the embedding and LM head: 16-bit in the GPU formats (AWQ, GPTQ and FP8 checkpoints keep
 * them unquantized); a GGUF file quantizes them with the rest (llama-quantize: Q6_K output for the K mixes), so the
 * file's average stands for them, and an F32 file keeps them in 32 bits.
 */
export function embeddingBytes(quant: QuantName): number {
  return isGgufQuant(quant) ? QUANTS[quant].bytesPerWeight : 2;
}

export function parseQuant(name: string): QuantName | undefined {
  return QUANT_ALIASES[name.toLowerCase().replace(/[^a-z0-9]/g, '')];
}

export const QUANT_NAMES = Object.keys(QUANTS) as QuantName[];

export const KV_CACHE_DTYPES: readonly KvCacheDtype[] = ['auto', 'fp8', 'int8'];

/** Bytes per KV-cache element. */
export function kvElementBytes(dtype: KvCacheDtype | undefined): number {
  return dtype === 'fp8' || dtype === 'int8' ? 1 : 2;
}

export function parseKvCacheDtype(name: string): KvCacheDtype | undefined {
  const k = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (k === 'auto' || k === 'fp16' || k === 'bf16') return 'auto';
  if (k.startsWith('fp8')) return 'fp8';
  if (k === 'int8' || k === 'kv8') return 'int8';
  return undefined;
}
