/**
 * Which simulated configuration a measured run is of: the flags the user gave win, then what the run folder
 * recorded (a run against the built-in simulator or `predict --out` records engine, model and GPU; a run against a
 * real server records the engine it detected, the served model, and the GPU only when `run --gpu` was given).
 */
import { configError } from '../../core/errors.js';
import { CPU_SPEC_FORMAT } from '../catalog/cpu.js';
import { listCpus, listHardware, findModel } from '../catalog/registry.js';
import type { SimEngineOptions } from '../create.js';
import { SIM_ENGINE_NAMES, findEngineProfile } from '../engine/profiles.js';
import type { MeasuredRun } from './run-rows.js';

/** Configuration flags the user typed (undefined: not given, take the run's). */
export interface ExplicitEngineFlags {
  engine?: string;
  model?: string;
  gpu?: string;
  gpus?: number;
  quant?: string;
  kvCacheDtype?: string;
}

const known = (f: () => unknown): boolean => {
  try {
    f();
    return true;
  } catch {
    return false;
  }
};

/** The engine options the run is a measurement of; one line naming the flag to pass when neither source says. */
export function simEngineForRun(run: MeasuredRun, flags: ExplicitEngineFlags, seed?: number): SimEngineOptions {
  const { context, target } = run.run.summary;
  const rec = run.manifest.engine ?? {};
  const name = run.dir;
  // `run` records the dialect it detected (vllm, tgi, sglang, …) in target.engine; `predict` its engine id.
  const recordedEngine = [rec.engine, target.engine].find((e) => e !== undefined && e !== 'unknown' && known(() => findEngineProfile(e)));
  const engine = flags.engine ?? recordedEngine;
  if (engine === undefined) {
    throw configError(`${name} does not say which engine served it (recorded: ${target.engine || 'nothing'})`, `pass --engine (${SIM_ENGINE_NAMES.join(', ')})`);
  }
  const recordedModel = rec.model ?? context.model;
  const model = flags.model ?? (known(() => findModel(recordedModel)) ? recordedModel : undefined);
  if (model === undefined) {
    throw configError(`${name} measured model "${recordedModel}", which is not in the simulator's catalog`, 'pass --model NAME of a catalog model with the same architecture (or add it with --catalog FILE)');
  }
  const gpu = flags.gpu ?? rec.gpu ?? context.gpu;
  if (gpu === undefined) {
    throw configError(
      `${name} does not say which GPU it ran on`,
      `pass --gpu (${listHardware().join(', ')}), and --gpus N for tensor parallelism; a CPU: --gpu ${listCpus().join(' | ')} or ${CPU_SPEC_FORMAT}`,
    );
  }
  const quant = flags.quant ?? rec.quant ?? context.quant;
  // predict's engine description or a built-in-simulator run's context; a real server's run records none.
  const kvCacheDtype = flags.kvCacheDtype ?? rec.kvCacheDtype ?? context.kvCacheDtype;
  return {
    engine,
    model,
    gpu,
    gpus: flags.gpus ?? rec.gpus ?? context.gpus ?? 1,
    // A model whose name implies its quantization is given as it was recorded; fp16 is the default anyway.
    ...(quant !== undefined && quant !== 'fp16' ? { quant } : {}),
    // Given only where it differs from what the model implies (auto, or fp8 for nvidia/…-FP8), as quant is.
    ...(kvCacheDtype !== undefined && kvCacheDtype !== (findModel(model).impliedKvCacheDtype ?? 'auto') ? { kvCacheDtype } : {}),
    ...(seed !== undefined ? { seed } : {}),
  };
}
