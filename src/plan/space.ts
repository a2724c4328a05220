/**
 * The deployment search space: every GPU × GPUs per replica × quantization × engine, each narrowable, with a
 * reason for every shape that cannot run at all (so nothing disappears from the plan silently).
 */
import { InferbenchError, configError } from '../core/errors.js';
import { type ResolvedSimEngine, type SimEngineOptions, resolveSimEngine } from '../sim/create.js';
import { findEngineProfile } from '../sim/engine/profiles.js';
import { findHardware, findModel, findQuant, listHardware } from '../sim/catalog/registry.js';
import type { KvCacheDtype, QuantName } from '../sim/catalog/types.js';
import { checkRequestFits, type RequestShape } from '../sim/limits.js';
import { kvCacheUnsupported } from './kv-cache-launch.js';
import type { CandidateShape, PlanJobSettings } from './types.js';

/** Tensor-parallel sizes searched by default. */
export const DEFAULT_TP = [1, 2, 4, 8] as const;

/**
 * Engines searched by default: the production servers the simulator models. Toy or legacy profiles
 * (llamacpp, ollama with 4 slots; vllm-legacy, vllm-v0) are searched only when named with --engine.
 */
export const DEFAULT_PLAN_ENGINES = ['vllm', 'sglang', 'lmdeploy', 'tgi', 'triton'] as const;

/**
 * The quantizations a catalog model "has": fp16 plus the three weight-only formats published for the
 * popular open models (AWQ, GPTQ-Int4, GPTQ-Int8 checkpoints, e.g. Qwen/Qwen2-72B-Instruct-AWQ). A model
 * named with a quantization suffix (Qwen2-72B-Instruct-AWQ) has only that one.
 */
export const DEFAULT_QUANTS: readonly QuantName[] = ['fp16', 'awq', 'gptq-int4', 'gptq-int8'];

/** Weight formats an engine cannot load, with the reason printed for the skipped candidate. */
const UNSUPPORTED: Record<string, Partial<Record<QuantName, string>>> = {
  lmdeploy: { 'gptq-int8': 'lmdeploy TurboMind runs 4-bit weights (AWQ, GPTQ-Int4) only, not GPTQ-Int8' },
};

export interface SpaceFilter {
  gpus?: string[];
  tp?: number[];
  quants?: string[];
  engines?: string[];
}

export interface SpaceAxes {
  gpus: string[];
  tp: number[];
  quants: QuantName[];
  engines: string[];
}

/** Resolve the axes the flags ask for (unknown names exit 2 with the known ones listed). */
export function resolveAxes(model: string, filter: SpaceFilter): SpaceAxes {
  const m = findModel(model);
  const gpus = filter.gpus ? unique(filter.gpus.map((g) => findHardware(g).name)) : listHardware();
  const tp = filter.tp ?? [...DEFAULT_TP];
  for (const t of tp) {
    if (!Number.isInteger(t) || t < 1 || t > 8) throw configError(`--tp ${t}: GPUs per replica must be whole numbers 1–8`, 'e.g. --tp 1,2,4,8');
  }
  let quants: QuantName[];
  if (filter.quants) {
    quants = unique(filter.quants.map((q) => findQuant(q)));
    if (m.impliedQuant && quants.some((q) => q !== m.impliedQuant)) {
      throw configError(`--quant ${filter.quants.join(',')}: model ${m.name} is the ${m.impliedQuant} checkpoint`, `drop --quant, or name the base model (${m.spec.name})`);
    }
  } else quants = m.impliedQuant ? [m.impliedQuant] : [...DEFAULT_QUANTS];
  const engines = filter.engines ? unique(filter.engines.map((e) => findEngineProfile(e).name)) : [...DEFAULT_PLAN_ENGINES];
  return { gpus, tp: unique(tp).sort((a, b) => a - b), quants, engines };
}

/** Every combination of the axes, in a stable order (GPU, TP, quantization, engine). */
export function enumerateShapes(axes: SpaceAxes): CandidateShape[] {
  const out: CandidateShape[] = [];
  for (const gpu of axes.gpus) {
    // A CPU runs the model as one device: it has no tensor-parallel shapes to consider.
    const tps = findHardware(gpu).cpu ? axes.tp.filter((t) => t === 1) : axes.tp;
    for (const gpus of tps) for (const quant of axes.quants) for (const engine of axes.engines) out.push({ gpu, gpus, quant, engine });
  }
  return out;
}

/** Engine options for one replica of a shape. */
export function engineOptions(model: string, shape: CandidateShape, extra: Partial<SimEngineOptions> = {}): SimEngineOptions {
  // A model named with its quantization suffix keeps it; passing it again would be refused as a mismatch.
  const implied = findModel(model).impliedQuant;
  return { engine: shape.engine, model, gpu: shape.gpu, gpus: shape.gpus, ...(implied ? {} : { quant: shape.quant }), ...extra };
}

/** What every candidate's engine options take from the job: the calibrated constants and the KV-cache type. */
export function jobEngineExtras(job: PlanJobSettings): Pick<SimEngineOptions, 'calibration' | 'kvCacheDtype'> {
  return { ...(job.calibration ? { calibration: job.calibration } : {}), ...(job.kvCacheDtype ? { kvCacheDtype: job.kvCacheDtype } : {}) };
}

export type Feasibility = { ok: true; resolved: ResolvedSimEngine } | { ok: false; reason: string };

/**
 * Can this shape serve the workload at all? No: the engine cannot load the format, the heads do not split over
 * the GPUs, the weights leave no KV cache, or the longest request does not fit the context. Says why.
 */
export function checkShape(model: string, shape: CandidateShape, longest: RequestShape, extra: Partial<SimEngineOptions> = {}): Feasibility {
  const unsupported = UNSUPPORTED[shape.engine]?.[shape.quant];
  if (unsupported) return { ok: false, reason: unsupported };
  const noKvCache = extra.kvCacheDtype === undefined ? undefined : kvCacheUnsupported(shape.engine, extra.kvCacheDtype as KvCacheDtype);
  if (noKvCache) return { ok: false, reason: noKvCache };
  try {
    const resolved = resolveSimEngine(engineOptions(model, shape, extra));
    checkRequestFits(resolved, longest);
    return { ok: true, resolved };
  } catch (err) {
    if (!(err instanceof InferbenchError)) throw err;
    return { ok: false, reason: err.message.replace(/^invalid simulated engine: /, '') };
  }
}

function unique<T>(xs: readonly T[]): T[] {
  return [...new Set(xs)];
}
