/**
 * Measured capacity factors (`plan --verify N --save-calibration FILE`, read back with `--calibration FILE`): a
 * deployment that was launched and measured holds `factor` times the load the simulator gives it. The plan treats the
 * factor as a change of load scale: one replica's capacity is the simulated one × factor, and a real load L on it is
 * predicted as the simulated replica at L / factor (the same point of its curve). Deployments not measured keep 1.
 */
import type { CapacityFactor } from '../sim/calibrate/types.js';
import { catalogKey } from '../sim/catalog/registry.js';
import type { CandidateShape, PlanJobSettings } from './types.js';

/** The measured factor of this deployment in the job's calibration, if it has one. */
export function capacityFactorFor(job: Pick<PlanJobSettings, 'model' | 'calibration' | 'kvCacheDtype'>, shape: CandidateShape): CapacityFactor | undefined {
  const factors = job.calibration?.capacityFactors;
  if (!factors || factors.length === 0) return undefined;
  const kv = job.kvCacheDtype ?? 'auto';
  return factors.find(
    (f) =>
      f.engine === shape.engine &&
      catalogKey(f.model) === catalogKey(job.model) &&
      catalogKey(f.gpu) === catalogKey(shape.gpu) &&
      f.gpus === shape.gpus &&
      f.quant === shape.quant &&
      (f.kvCacheDtype ?? 'auto') === kv,
  );
}

/** The factor to scale by (1: not measured). */
export function capacityScale(job: Pick<PlanJobSettings, 'model' | 'calibration' | 'kvCacheDtype'>, shape: CandidateShape): number {
  return capacityFactorFor(job, shape)?.factor ?? 1;
}

/** `A100-80GB 1× fp16 vllm`: a deployment as the notes name it. */
export function describeShape(s: Pick<CandidateShape, 'gpu' | 'gpus' | 'quant' | 'engine'>): string {
  return `${s.gpus}× ${s.gpu} ${s.quant} ${s.engine}`;
}
