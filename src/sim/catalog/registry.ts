import { existsSync } from 'node:fs';
import { configError } from '../../core/errors.js';
import { modelFromGguf } from './gguf-model.js';
import { BUILTIN_CPUS, CPU_SPEC_FORMAT, isCpuSpec, parseCpuSpec } from './cpu.js';
import { GGUF_NAME_SUFFIX } from './gguf-quants.js';
import { BUILTIN_HARDWARE, QUANT_NAMES, parseQuant } from './hardware.js';
import { BUILTIN_MODELS } from './models.js';
import type { HardwareSpec, KvCacheDtype, ModelSpec, QuantName } from './types.js';

/** Lookup key: case-insensitive, punctuation and spaces ignored ("A100 40G" = "a100-40g"). */
export function catalogKey(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9.]/g, '').replace(/\./g, 'p');
}

const models = new Map<string, ModelSpec>();
const hardware = new Map<string, HardwareSpec>();

function index<T extends { name: string; aliases?: string[] }>(map: Map<string, T>, spec: T): void {
  for (const n of [spec.name, ...(spec.aliases ?? [])]) map.set(catalogKey(n), spec);
}

for (const m of BUILTIN_MODELS) index(models, m);
for (const h of [...BUILTIN_HARDWARE, ...BUILTIN_CPUS]) index(hardware, h);

/** Add (or replace) a model; later registrations win. */
export function registerModel(spec: ModelSpec): void {
  validateModel(spec);
  index(models, spec);
}

export function registerHardware(spec: HardwareSpec): void {
  if (!(spec.tflops > 0 && spec.memGiB > 0 && spec.bwGBs > 0)) {
    throw configError(`hardware ${spec.name}: tflops, memGiB and bwGBs must be positive`);
  }
  index(hardware, spec);
}

export function listModels(): string[] {
  return [...new Set([...models.values()].map((m) => m.name))].sort();
}

/** The GPUs (a plan searches these by default); CPUs are listed by listCpus. */
export function listHardware(): string[] {
  return [...new Set([...hardware.values()].filter((h) => !h.cpu).map((h) => h.name))].sort();
}

export function listCpus(): string[] {
  return [...new Set([...hardware.values()].filter((h) => h.cpu).map((h) => h.name))].sort();
}

export interface ResolvedModel {
  /** The name as the user gave it (what /v1/models reports). */
  name: string;
  spec: ModelSpec;
  /** Quantization implied by the name suffix (-AWQ, -GPTQ-Int8, ...), if any. */
  impliedQuant?: QuantName;
  /**
   * KV-cache type the checkpoint asks for: NVIDIA's ModelOpt FP8 checkpoints (`nvidia/…-FP8`) set
   * `kv_cache_quant_algo: FP8`, which TensorRT-LLM and vLLM's `kv_cache_dtype=auto` follow.
   */
  impliedKvCacheDtype?: KvCacheDtype;
}

const QUANT_SUFFIX = /[-_](awq|gptq[-_]?int4|gptq[-_]?int8|gptq|fp8(?:[-_]dynamic)?|w4a16|int4|int8)$/i;
/** Release tags people append to a base model's name: -Instruct, -Chat, -it, -hf, -Base. */
const VARIANT_TAG = /[-_](instruct|chat|it|hf|base)(?=$|[-_])/gi;

function lookupModel(bare: string): ModelSpec | undefined {
  return models.get(catalogKey(bare)) ?? models.get(catalogKey(bare.replace(VARIANT_TAG, '')));
}

/**
 * Resolve a model as people name it: a Hugging Face id with or without its org (`Qwen/Qwen3-14B`,
 * `Qwen3-14B`), with or without -Instruct/-Chat, and a quantization suffix (-AWQ, -GPTQ-Int4, -GPTQ-Int8, -FP8)
 * that selects the quantization.
 */
export function findModel(name: string): ResolvedModel {
  // A GGUF file on this machine describes itself (llama-server reports the path of the model it serves).
  if (/\.gguf$/i.test(name.trim()) && existsSync(name.trim())) {
    const g = modelFromGguf(name.trim());
    return { name: g.spec.name, spec: g.spec, ...(g.quant ? { impliedQuant: g.quant } : {}) };
  }
  const bare = name.trim().replace(/^.*[\\/]/, '');
  const direct = lookupModel(bare);
  if (direct) return { name: bare, spec: direct };
  const gguf = findGgufNamedModel(bare);
  if (gguf) return gguf;
  const m = QUANT_SUFFIX.exec(bare);
  if (m?.[1]) {
    const base = lookupModel(bare.slice(0, m.index));
    const q = parseQuant(m[1]);
    if (base && q) return { name: bare, spec: base, impliedQuant: q, ...(q === 'fp8' && /^\s*nvidia\//i.test(name) ? { impliedKvCacheDtype: 'fp8' as const } : {}) };
  }
  throw configError(
    `unknown model "${name}"`,
    `known models: ${listModels().join(', ')} (a -AWQ / -GPTQ-Int4 / -GPTQ-Int8 / -FP8 suffix, or a GGUF name's -Q4_K_M / -Q8_0 / -F16, selects the quantization; a path to a .gguf file describes itself; add others with a catalog file or a Hugging Face config.json: --catalog FILE)`,
  );
}

/**
 * A GGUF file as people name it: `Llama-3.2-1B-Instruct-Q4_K_M.gguf`, `llama-2-7b.Q8_0.gguf`, `qwen2.5-0.5b-instruct-f16`:
 * the type after the last `-`, `_` or `.` selects the quantization, the rest is the model.
 */
function findGgufNamedModel(bare: string): ResolvedModel | undefined {
  const stem = bare.replace(/\.gguf$/i, '');
  const m = GGUF_NAME_SUFFIX.exec(stem);
  const base = lookupModel(m ? stem.slice(0, m.index) : stem);
  if (!base) return undefined;
  const q = m?.[1] ? parseQuant(m[1]) : undefined;
  return { name: bare, spec: base, ...(q ? { impliedQuant: q } : {}) };
}

export function findHardware(name: string): HardwareSpec {
  const h = hardware.get(catalogKey(name.trim()));
  if (h) return h;
  if (isCpuSpec(name)) return parseCpuSpec(name);
  throw configError(`unknown GPU "${name}"`, `known GPUs: ${listHardware().join(', ')}; CPUs: ${listCpus().join(', ')}, or ${CPU_SPEC_FORMAT}`);
}

export function findQuant(name: string): QuantName {
  const q = parseQuant(name);
  if (q) return q;
  throw configError(`unknown quantization "${name}"`, `known: ${QUANT_NAMES.join(', ')}`);
}

export function validateModel(m: ModelSpec): void {
  const bad: string[] = [];
  for (const k of ['layers', 'hidden', 'heads', 'kvHeads', 'headDim', 'vocab', 'maxModelLen'] as const) {
    if (!(Number.isInteger(m[k]) && m[k] > 0)) bad.push(k);
  }
  if (!m.moe && !(m.ffn > 0)) bad.push('ffn');
  if (m.moe && !(m.moe.experts > 0 && m.moe.activeExperts > 0 && m.moe.expertFfn > 0)) bad.push('moe');
  if (bad.length) throw configError(`model ${m.name}: invalid or missing ${bad.join(', ')}`);
}
