import type { HardwareSpec, LinkKind, QuantName, QuantSpec } from './types.js';

/** Datasheet figures (research/simulator.md §4). Efficiencies live in the calibration file. */
export const BUILTIN_HARDWARE: HardwareSpec[] = [
  {
    name: 'A100-40GB', aliases: ['A100', 'A100-40G', 'A100-SXM4-40GB', 'A100-40GB-SXM4'],
    tflops: 312, memGiB: 40, bwGBs: 1555, link: 'nvlink', source: 'NVIDIA A100 datasheet',
  },
  {
    name: 'A100-80GB', aliases: ['A100-80G', 'A100-SXM4-80GB', 'A100-80GB-SXM4'],
    tflops: 312, memGiB: 80, bwGBs: 2039, link: 'nvlink', source: 'NVIDIA A100 datasheet',
  },
  {
    name: 'L20-48GB', aliases: ['L20', 'L20-48G'],
    tflops: 119.5, memGiB: 48, bwGBs: 864, link: 'pcie', source: 'L20 spec pages (medium confidence)',
  },
  {
    name: 'L40S', aliases: ['L40S-48GB'],
    tflops: 362, memGiB: 48, bwGBs: 864, link: 'pcie', source: 'NVIDIA L40S datasheet',
  },
  {
    name: 'H100', aliases: ['H100-SXM', 'H100-80GB', 'H100-SXM5-80GB', 'H100-SXM-80GB'],
    tflops: 989, memGiB: 80, bwGBs: 3350, link: 'nvlink', source: 'NVIDIA H100 datasheet',
  },
  {
    name: 'H200', aliases: ['H200-141GB', 'H200-SXM-141GB', 'H200-SXM'],
    tflops: 989, memGiB: 141, bwGBs: 4800, link: 'nvlink', source: 'NVIDIA H200 datasheet',
  },
  {
    name: 'RTX-4090', aliases: ['4090', 'RTX4090', 'GeForce-RTX-4090'],
    tflops: 165.2, memGiB: 24, bwGBs: 1008, link: 'pcie-no-p2p', source: 'Ada whitepaper via waredb.com',
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
};

const QUANT_ALIASES: Record<string, QuantName> = {
  fp16: 'fp16', float16: 'fp16', half: 'fp16', bf16: 'bf16', bfloat16: 'bf16', auto: 'fp16', none: 'fp16',
  awq: 'awq', int4: 'gptq-int4', gptq: 'gptq-int4', gptqint4: 'gptq-int4', gptqint8: 'gptq-int8', int8: 'gptq-int8',
};

export function parseQuant(name: string): QuantName | undefined {
  return QUANT_ALIASES[name.toLowerCase().replace(/[^a-z0-9]/g, '')];
}

export const QUANT_NAMES = Object.keys(QUANTS) as QuantName[];
