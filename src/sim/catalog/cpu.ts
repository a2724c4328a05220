/**
 * CPUs as the simulator's hardware (llama.cpp on a server or a desktop): memory bandwidth sets the decode rate (each
 * step reads every weight once), the matmul peak sets prompt processing. Two ways to name one:
 * - a catalogue entry below (`--gpu EPYC-9654`), whose bandwidth is the vendor's figure;
 * - a generic spec `cpu:<cores>c:<GB/s>[:<GFLOP/s>gflops][:<GiB>gib]` (`--gpu cpu:8c:60`) for any other machine.
 *
 * Peak FLOP/s are not on most CPU spec sheets: every entry's `gflops` is an estimate, cores × base clock × FP32 FLOPs
 * per cycle of its vector units (two 256-bit FMA pipes: 32; two 512-bit: 64; two 128-bit NEON: 16), the rate
 * llama.cpp's prompt processing is measured against. The calibration (`predict --calibrate-from RUN`) fits the
 * efficiencies of both figures to a measured run.
 */
import { configError } from '../../core/errors.js';
import type { HardwareSpec } from './types.js';

interface CpuEntry {
  name: string;
  aliases: string[];
  cores: number;
  /** Peak DRAM bandwidth per socket, GB/s (vendor figure, or channels × MT/s × 8 bytes where the sheet gives those). */
  bwGBs: number;
  /** Estimate: cores × base GHz × FP32 FLOPs per cycle (see above). */
  gflops: number;
  /** The most memory the platform takes (vendor figure): the ceiling for "does the model fit". */
  memGiB: number;
  source: string;
}

const CPUS: CpuEntry[] = [
  {
    name: 'EPYC-9654', aliases: ['AMD-EPYC-9654', 'Genoa-9654'], cores: 96, bwGBs: 460.8, gflops: 96 * 2.4 * 32, memGiB: 6144,
    source: 'AMD EPYC 9654 product page: 96 cores, 2.4 GHz base, 12 channels DDR5-4800, per-socket memory bandwidth 460.8 GB/s, 6 TB max; GFLOP/s estimated (Zen 4: 32 FP32 FLOPs per cycle)',
  },
  {
    name: 'EPYC-7763', aliases: ['AMD-EPYC-7763', 'Milan-7763'], cores: 64, bwGBs: 204.8, gflops: 64 * 2.45 * 32, memGiB: 4096,
    source: 'AMD EPYC 7763 product page: 64 cores, 2.45 GHz base, 8 channels DDR4-3200, per-socket memory bandwidth 204.8 GB/s, 4 TB max; GFLOP/s estimated (Zen 3: 32 FP32 FLOPs per cycle)',
  },
  {
    name: 'Xeon-8480+', aliases: ['Xeon-Platinum-8480+', 'Intel-Xeon-Platinum-8480+', 'Xeon-8480', 'Sapphire-Rapids-8480+'], cores: 56,
    bwGBs: 307.2, gflops: 56 * 2.0 * 64, memGiB: 4096,
    source: 'Intel ark, Xeon Platinum 8480+: 56 cores, 2.0 GHz base, 8 channels DDR5-4800 (8 × 4800 MT/s × 8 B = 307.2 GB/s), 4 TB max; GFLOP/s estimated (two AVX-512 FMA units: 64 FP32 FLOPs per cycle; AMX not counted)',
  },
  {
    name: 'Ryzen-9-7950X', aliases: ['AMD-Ryzen-9-7950X', '7950X'], cores: 16, bwGBs: 83.2, gflops: 16 * 4.5 * 32, memGiB: 128,
    source: 'AMD Ryzen 9 7950X product page: 16 cores, 4.5 GHz base, 2 channels DDR5-5200 (2 × 5200 MT/s × 8 B = 83.2 GB/s), 128 GB max; GFLOP/s estimated (Zen 4: 32 FP32 FLOPs per cycle)',
  },
  {
    name: 'Core-i9-13900K', aliases: ['Intel-Core-i9-13900K', 'i9-13900K', '13900K'], cores: 24, bwGBs: 89.6,
    gflops: 8 * 3.0 * 32 + 16 * 2.2 * 16, memGiB: 128,
    source: 'Intel ark, Core i9-13900K: 8 P-cores 3.0 GHz + 16 E-cores 2.2 GHz base, max memory bandwidth 89.6 GB/s, 128 GB max; GFLOP/s estimated (P-core 32, E-core 16 FP32 FLOPs per cycle)',
  },
  {
    name: 'RPi5', aliases: ['Raspberry-Pi-5', 'BCM2712', 'Cortex-A76x4'], cores: 4, bwGBs: 17.1, gflops: 4 * 2.4 * 16, memGiB: 8,
    source: 'Raspberry Pi 5 product brief: BCM2712, 4× Cortex-A76 at 2.4 GHz, LPDDR4X-4267 on a 32-bit bus (4267 MT/s × 4 B = 17.1 GB/s), 8 GB max at launch; GFLOP/s estimated (two 128-bit NEON FMA pipes: 16 FP32 FLOPs per cycle)',
  },
];

const toSpec = (c: CpuEntry): HardwareSpec => ({
  name: c.name, aliases: c.aliases, tflops: c.gflops / 1000, memGiB: c.memGiB, bwGBs: c.bwGBs, link: 'pcie', cpu: { cores: c.cores }, source: c.source,
});

export const BUILTIN_CPUS: HardwareSpec[] = CPUS.map(toSpec);

/** A generic CPU with no FLOP/s given: cores × 3 GHz × 32 FP32 FLOPs per cycle (AVX2, two FMA pipes) — an estimate. */
const GENERIC_GHZ = 3;
const GENERIC_FLOPS_PER_CYCLE = 32;
/** A generic CPU with no memory given: assumed, only to check that the weights fit (llama.cpp's KV is its -c). */
const GENERIC_MEM_GIB = 64;

export const CPU_SPEC_FORMAT = 'cpu:<cores>c:<GB/s>[:<GFLOP/s>gflops][:<GiB>gib], e.g. cpu:8c:60 or cpu:1c:20:96gflops:16gib';

const positive = (s: string): number | undefined => {
  const v = Number(s);
  return /^\d+(\.\d+)?$/.test(s) && v > 0 && Number.isFinite(v) ? v : undefined;
};

/** True when `name` asks for a generic CPU (starts with `cpu:`), valid or not. */
export function isCpuSpec(name: string): boolean {
  return /^\s*cpu:/i.test(name);
}

/** Parse `cpu:8c:60[:500gflops][:32gib]`; a one-line usage error names the part that is wrong. */
export function parseCpuSpec(raw: string): HardwareSpec {
  const text = raw.trim().toLowerCase();
  const bad = (what: string): never => {
    throw configError(`--gpu ${raw}: ${what}`, `write ${CPU_SPEC_FORMAT}`);
  };
  const parts = text.split(':').slice(1);
  const [coresPart, bwPart, ...rest] = parts;
  const cores = coresPart !== undefined && /^\d+c$/.test(coresPart) ? Number(coresPart.slice(0, -1)) : undefined;
  if (cores === undefined || !Number.isInteger(cores) || cores < 1) return bad(`"${coresPart ?? ''}" is not a core count like 8c`);
  const bw = bwPart === undefined ? undefined : positive(bwPart.replace(/(gb\/?s|gbps)$/, ''));
  if (bw === undefined) return bad(`"${bwPart ?? ''}" is not a memory bandwidth in GB/s like 60`);
  let gflops: number | undefined;
  let memGiB: number | undefined;
  for (const part of rest) {
    const m = /^(\d+(?:\.\d+)?)(gflops|gib|gb)$/.exec(part);
    const v = m ? positive(m[1] as string) : undefined;
    if (!m || v === undefined) return bad(`"${part}" is neither <GFLOP/s>gflops nor <GiB>gib`);
    if (m[2] === 'gflops') {
      if (gflops !== undefined) return bad('GFLOP/s given twice');
      gflops = v;
    } else {
      if (memGiB !== undefined) return bad('memory given twice');
      memGiB = v;
    }
  }
  const flops = gflops ?? cores * GENERIC_GHZ * GENERIC_FLOPS_PER_CYCLE;
  const mem = memGiB ?? GENERIC_MEM_GIB;
  // The canonical name parses back to the same spec: a run that records it resolves it again.
  const name = `cpu:${cores}c:${bw}gbs:${flops}gflops:${mem}gib`;
  const assumed = [
    ...(gflops === undefined ? [`${flops} GFLOP/s estimated as ${cores} cores × ${GENERIC_GHZ} GHz × ${GENERIC_FLOPS_PER_CYCLE} FLOPs per cycle`] : []),
    ...(memGiB === undefined ? [`${mem} GiB of memory assumed`] : []),
  ];
  return {
    name, tflops: flops / 1000, memGiB: mem, bwGBs: bw, link: 'pcie', cpu: { cores },
    source: `generic CPU from --gpu ${raw.trim()}${assumed.length ? ` (${assumed.join('; ')})` : ''}`,
  };
}
