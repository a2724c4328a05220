import { configError } from '../core/errors.js';
import { DEFAULT_CALIBRATION } from './calibrate/constants.js';
import { PRIORS } from './calibrate/priors.js';
import { parseKvCacheDtype, KV_CACHE_DTYPES } from './catalog/hardware.js';
import type { Calibration } from './calibrate/types.js';
import { findHardware, findModel, findQuant } from './catalog/registry.js';
import type { HardwareSpec, KvCacheDtype, ModelSpec, QuantName } from './catalog/types.js';
import { planMemory } from './cost/memory.js';
import { StepCostModel } from './cost/step-cost.js';
import type { SimDriver } from './des/driver.js';
import { Engine, type EngineConfig } from './engine/engine.js';
import { type EngineProfile, findEngineProfile } from './engine/profiles.js';
import type { SpecDecode } from './engine/spec-decode.js';
import { type Admission, admitRequest } from './wire/length-errors.js';

export interface SimEngineOptions {
  /** vllm (V1) | vllm-legacy (0.2) | vllm-v0 | tgi | sglang | lmdeploy | llamacpp | triton | ollama. */
  engine: string;
  model: string;
  gpu: string;
  /** Tensor-parallel degree, 1–8. */
  gpus: number;
  quant?: string;
  /** KV-cache element type: auto (16-bit) | fp8 | int8 (engines that offer it: vLLM, SGLang, TensorRT-LLM, lmdeploy). */
  kvCacheDtype?: string;
  seed?: number;
  gpuMemoryUtilization?: number;
  maxNumSeqs?: number;
  maxNumBatchedTokens?: number;
  /** Override the model's context length. */
  maxModelLen?: number;
  /**
   * llama.cpp's total context (llama-server -c / --ctx-size): its KV cache holds this many tokens, split evenly over
   * the slots (`maxNumSeqs`, llama-server --parallel), so one request may use ctxSize / slots. Undefined: the model's
   * context for every request, KV from memory (as before). Other engines refuse it.
   */
  ctxSize?: number;
  /** Lognormal σ of per-step jitter (e.g. 0.03); 0/undefined = deterministic steps. */
  noise?: number;
  /** Multiplies all engine time; 0 = infinitely fast engine (client-overhead benchmarks). */
  modelTimeScale?: number;
  calibration?: Calibration;
  /** Datasheet peaks, no efficiencies or host overheads (what-if: how optimistic is a roofline?). */
  pureRoofline?: boolean;
  /**
   * Benchmarked in process, without the engine's HTTP front (trtllm-bench, vLLM's LLM.generate and
   * benchmark_throughput, LMDeploy's profile_generation): no per-request API time (tApiMs).
   */
  inProcess?: boolean;
  /** false turns off the prefix cache of engines that have one (vLLM V1, SGLang); undefined = the engine's default. */
  prefixCaching?: boolean;
  /** Speculative decoding: K draft tokens per decode step with this acceptance rate. */
  specDecode?: SpecDecode;
  /**
   * vLLM V0's chunked prefill (--enable-chunked-prefill): undefined = the release's default (on above a 32K context
   * from 0.5.4 on); false = off, as in 0.4.x; true = on at any context. Engines without the option ignore it.
   */
  chunkedPrefill?: boolean;
  /**
   * Which generation of kernels the engine runs: legacy = quantized GEMMs of the quantization's own CUDA kernels (AWQ
   * as vLLM 0.2 and TGI 1.x ran it) and fused-MoE kernels without tuned configurations (vLLM 0.4), whose MoE
   * efficiency is the shared `etaMoe`; modern = Marlin and its successors, the engine's own fitted MoE constants.
   * Undefined = the engine profile's.
   */
  kernels?: 'legacy' | 'modern';
}

/** Run metadata for manifests and /v1/models. */
export interface SimEngineDescription {
  engine: string;
  engineLabel: string;
  model: string;
  gpu: string;
  gpus: number;
  quant: QuantName;
  kvCacheDtype: KvCacheDtype;
  maxModelLen: number;
  kvBlocks: number;
  kvTokens: number;
  maxNumSeqs: number;
  maxNumBatchedTokens: number;
  weightsGiBPerGpu: number;
  /** Engine time constants fitted on seed data (false: priors). */
  calibrated: boolean;
  apiOverheadMs: number;
  /** Prompt blocks are shared through a prefix cache (the engine has one and it was not turned off). */
  prefixCaching: boolean;
  /** The hardware's efficiencies were fitted (seed tables or a --calibrate-from run); false: priors. */
  hardwareCalibrated: boolean;
}

export interface ResolvedSimEngine {
  description: SimEngineDescription;
  profile: EngineProfile;
  model: ModelSpec;
  hardware: HardwareSpec;
  config: EngineConfig;
  /**
   * What the engine's HTTP front answers to a prompt with an explicit max_tokens (the `sim` routes give
   * the same answer): run it, lengths possibly clamped, or reject it with the engine's status and message.
   */
  admit(promptTokens: number, maxTokens: number): Admission;
}

/** Validate options (every problem reported at once) and build the engine configuration. */
export function resolveSimEngine(opts: SimEngineOptions): ResolvedSimEngine {
  const problems: string[] = [];
  const attempt = <T>(f: () => T): T | undefined => {
    try {
      return f();
    } catch (err) {
      const e = err as { message: string; hint?: string };
      problems.push(e.hint ? `${e.message} (${e.hint})` : e.message);
      return undefined;
    }
  };
  const baseProfile = attempt(() => findEngineProfile(opts.engine));
  const rm = attempt(() => findModel(opts.model));
  const hw = attempt(() => findHardware(opts.gpu));
  const explicitQuant = opts.quant === undefined ? undefined : attempt(() => findQuant(opts.quant as string));
  const kvCacheDtype = opts.kvCacheDtype === undefined ? (rm?.impliedKvCacheDtype ?? 'auto') : parseKvCacheDtype(opts.kvCacheDtype);
  if (!kvCacheDtype) problems.push(`unknown KV-cache dtype "${opts.kvCacheDtype}" (known: ${KV_CACHE_DTYPES.join(', ')})`);
  const tp = opts.gpus;
  if (!Number.isInteger(tp) || tp < 1 || tp > 8) problems.push(`gpus must be an integer 1–8, got ${tp}`);
  const util = opts.gpuMemoryUtilization ?? 0.9;
  if (!(util > 0 && util <= 1)) problems.push(`gpuMemoryUtilization must be in (0, 1], got ${util}`);
  const scale = opts.modelTimeScale ?? 1;
  if (!(scale >= 0 && Number.isFinite(scale))) problems.push(`modelTimeScale must be ≥ 0, got ${scale}`);
  if (rm && explicitQuant && rm.impliedQuant && explicitQuant !== rm.impliedQuant) {
    problems.push(`model ${rm.name} implies quantization ${rm.impliedQuant}, but ${explicitQuant} was given`);
  }
  if (hw?.cpu && Number.isInteger(tp) && tp !== 1) problems.push(`${hw.name} is a CPU: it runs the model as one device, so --gpus must be 1 (got ${tp})`);
  const llamaSlots = baseProfile?.id === 'llamacpp';
  if (opts.ctxSize !== undefined && !llamaSlots) problems.push(`ctx-size is llama.cpp's -c; engine ${opts.engine} does not take it`);
  if (opts.ctxSize !== undefined && !(Number.isInteger(opts.ctxSize) && opts.ctxSize >= 16)) problems.push(`ctx-size must be a whole number of tokens ≥ 16, got ${opts.ctxSize}`);
  if (rm && Number.isInteger(tp) && rm.spec.heads % tp !== 0) {
    problems.push(`${rm.spec.heads} attention heads of ${rm.spec.name} cannot be split over ${tp} GPUs`);
  }
  // Each problem names the value given and what is known (e.g. `unknown GPU "H999" (known GPUs: …)`): no prefix about
  // an "engine" the user never named when the mistake was --gpu or --model.
  if (problems.length || !baseProfile || !rm || !hw || !kvCacheDtype) throw configError(problems.join('; '));
  const quant: QuantName = explicitQuant ?? rm.impliedQuant ?? 'fp16';
  const cal = opts.calibration ?? DEFAULT_CALIBRATION;
  // Only a given -c splits the context (llama-server -c N --parallel S: N / S tokens per slot, as it logs n_ctx_slot);
  // without one every request may use the model's whole context (llama-server's context from the model).
  const slots = llamaSlots && opts.ctxSize !== undefined ? llamaCppSlots(opts, baseProfile, hw, opts.ctxSize) : undefined;
  const contextLen = opts.maxModelLen ?? slots?.perSlot ?? rm.spec.maxModelLen;
  const chunk = baseProfile.longContextChunk;
  const chunked = chunk !== undefined && (opts.chunkedPrefill ?? contextLen > chunk.above);
  const profile: EngineProfile = {
    ...baseProfile,
    ...(llamaSlots ? { label: `llama.cpp server (${opts.maxNumSeqs ?? baseProfile.maxNumSeqs(hw)} slots${slots ? ` of ${slots.perSlot} tokens, -c ${slots.ctx}` : ''}; continuous batching)` } : {}),
    ...(chunked ? { policy: 'mixed' as const, chunkedPrefill: true } : {}),
    ...(opts.kernels ? { quantFamily: opts.kernels } : {}),
  };
  const maxNumSeqs = opts.maxNumSeqs ?? profile.maxNumSeqs(hw);
  const maxNumBatchedTokens = opts.maxNumBatchedTokens ?? (chunked ? chunk.tokens : profile.maxNumBatchedTokens(contextLen, hw, rm.spec, tp));
  const mem = planMemory(rm.spec, hw, tp, quant, {
    gpuMemoryUtilization: util, maxNumBatchedTokens, maxNumSeqs, kvCacheDtype,
    ...(profile.kvFreeFraction !== undefined ? { kvFreeFraction: opts.gpuMemoryUtilization ?? profile.kvFreeFraction } : {}),
  });
  if (slots) {
    // llama.cpp allocates its -c tokens of KV at start whatever the memory (and fails to start when they do not fit).
    const needBlocks = Math.ceil(slots.ctx / 16);
    if (mem.kvBlocks < needBlocks) {
      throw configError(
        `${rm.name} (${quant}) with a ${slots.ctx}-token context does not fit ${hw.name}: ${mem.weightsGiBPerGpu.toFixed(1)} GiB of weights leave room for ${Math.max(0, mem.kvTokens)} tokens of KV cache`,
        hw.cpu ? 'give the machine\'s memory (cpu:…:<GiB>gib), a smaller --ctx-size or a smaller quantization' : 'use a smaller --ctx-size, a larger GPU or a smaller quantization',
      );
    }
    mem.kvBlocks = needBlocks;
    mem.kvTokens = needBlocks * 16;
  } else if (mem.kvBlocks < Math.ceil(Math.min(contextLen, 4096) / 16) / 4) {
    throw configError(
      `${rm.name} (${quant}) does not fit ${tp}× ${hw.name}: ${mem.weightsGiBPerGpu.toFixed(1)} GiB of weights per GPU leaves ${Math.max(0, mem.kvTokens)} tokens of KV cache`,
      'use more GPUs, a larger GPU or a quantized model',
    );
  }
  // TGI 3 sets max_total_tokens to what the KV cache holds when that is less than the context.
  const maxModelLen = profile.contextFromKv && opts.maxModelLen === undefined ? Math.min(contextLen, mem.kvTokens) : contextLen;
  const cost = new StepCostModel(rm.spec, hw, tp, quant, profile, cal, { pureRoofline: opts.pureRoofline === true, kvCacheDtype });
  const ec = cal.engines[profile.calKey] ?? PRIORS.engines[profile.calKey];
  const tApi = opts.pureRoofline || opts.inProcess ? 0 : (ec?.tApiMs ?? 5);
  const config: EngineConfig = {
    profile, cost, modelName: rm.name, maxModelLen, kvBlocks: mem.kvBlocks, maxNumSeqs, maxNumBatchedTokens,
    ingestMs: tApi * profile.ingestShare, egressMs: tApi * (1 - profile.ingestShare), timeScale: scale,
    noiseSigma: opts.noise ?? 0, seed: opts.seed ?? 1, prefixCaching: profile.prefixCaching && opts.prefixCaching !== false,
    ...(opts.specDecode ? { specDecode: opts.specDecode } : {}),
    ...(hw.power ? { power: { idleW: hw.power.idleW, maxW: hw.power.maxW, gpus: tp } } : {}),
  };
  const description: SimEngineDescription = {
    engine: profile.id, engineLabel: profile.label, model: rm.name, gpu: hw.name, gpus: tp, quant, kvCacheDtype, maxModelLen,
    kvBlocks: mem.kvBlocks, kvTokens: mem.kvTokens, maxNumSeqs, maxNumBatchedTokens,
    weightsGiBPerGpu: Math.round(mem.weightsGiBPerGpu * 100) / 100,
    calibrated: profile.calibrated && cal.fitted.includes(profile.calKey), apiOverheadMs: tApi,
    prefixCaching: config.prefixCaching === true,
    hardwareCalibrated: cal.fitted.includes(hw.calibrationKey ?? hw.name),
  };
  const admit = (promptTokens: number, maxTokens: number): Admission => admitRequest(profile.wire, maxModelLen, promptTokens, maxTokens);
  return { description, profile, model: rm.spec, hardware: hw, config, admit };
}

/** llama.cpp's slots and context split: `--parallel` slots share `-c` tokens, ctx / slots each. */
function llamaCppSlots(opts: SimEngineOptions, profile: EngineProfile, hw: HardwareSpec, ctx: number): { ctx: number; perSlot: number } {
  const n = opts.maxNumSeqs ?? profile.maxNumSeqs(hw);
  const perSlot = Math.floor(ctx / n);
  if (perSlot < 16) throw configError(`ctx-size ${ctx} split over ${n} slots leaves ${perSlot} tokens per slot`, 'give a larger --ctx-size or fewer --parallel slots');
  return { ctx, perSlot };
}

export function describeSimEngine(opts: SimEngineOptions): SimEngineDescription {
  return resolveSimEngine(opts).description;
}

/** Build a simulated engine on a driver (VirtualDriver for predictions, RealTimeDriver for the HTTP sim). */
export function createSimEngine(opts: SimEngineOptions, driver: SimDriver): Engine {
  return new Engine(resolveSimEngine(opts).config, driver);
}
