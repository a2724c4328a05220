/**
 * `plan --verify N --save-calibration FILE`: what the measurements taught, in the calibration file format that
 * `plan --calibration FILE` and `predict --calibration FILE` read: the constants the plan ran on, plus one capacity
 * factor per measured deployment (measured / simulated capacity under the SLO). A later plan multiplies that
 * deployment's simulated capacity by its factor (src/plan/capacity-factor.ts); factors already in the file for other
 * deployments are kept, one for the same deployment is replaced.
 */
import { saveCalibrationFile } from '../sim/calibrate/file.js';
import { DEFAULT_CALIBRATION } from '../sim/calibrate/constants.js';
import type { Calibration, CapacityFactor } from '../sim/calibrate/types.js';
import { sloFlag } from '../plan/plan.js';
import type { PlanResult } from '../plan/types.js';
import type { VerificationEntry } from './types.js';

const sameDeployment = (a: CapacityFactor, b: CapacityFactor): boolean =>
  a.engine === b.engine && a.model === b.model && a.gpu === b.gpu && a.gpus === b.gpus && a.quant === b.quant && (a.kvCacheDtype ?? 'auto') === (b.kvCacheDtype ?? 'auto');

/** One factor per measured candidate. The plan's prediction may already carry an older factor: it is divided out. */
export function capacityFactors(entries: readonly VerificationEntry[], plan: PlanResult, kvCacheDtype: string | undefined, now: Date): CapacityFactor[] {
  const out: CapacityFactor[] = [];
  for (const e of entries) {
    if (e.measuredCapacity === null || !(e.measuredCapacity > 0) || e.status !== 'ok') continue;
    const c = e.candidate;
    const old = plan.candidates.find((p) => p.engine === c.engine && p.gpu === c.gpu && p.gpus === c.gpus && p.quant === c.quant)?.capacityFactor ?? 1;
    const simulatedCapacity = e.predictedCapacity / old;
    out.push({
      engine: c.engine, model: plan.model, gpu: c.gpu, gpus: c.gpus, quant: c.quant,
      ...(kvCacheDtype !== undefined && kvCacheDtype !== 'auto' ? { kvCacheDtype } : {}),
      factor: +(e.measuredCapacity / simulatedCapacity).toPrecision(6),
      simulatedCapacity: +simulatedCapacity.toPrecision(6),
      measuredCapacity: e.measuredCapacity,
      slo: `${plan.attainment}% of requests within ${sloFlag(plan.slo)}`,
      workload: `${plan.workload}; ${plan.arrival} arrivals`,
      ...(e.runDir ? { runDir: e.runDir } : {}),
      measuredAt: now.toISOString(),
    });
  }
  return out;
}

/** Writes FILE: the plan's constants (or the built-in ones) and the factors, merged with those the constants had. */
export function saveVerifiedCalibration(file: string, base: Calibration | undefined, factors: readonly CapacityFactor[], now: Date): Calibration {
  const constants = structuredClone(base ?? DEFAULT_CALIBRATION);
  const kept = (constants.capacityFactors ?? []).filter((old) => !factors.some((f) => sameDeployment(old, f)));
  const cal: Calibration = {
    ...constants,
    note: `${base ? base.note : 'built-in constants'}; capacity factors measured by inferbench plan --verify (${now.toISOString().slice(0, 10)})`,
    capacityFactors: [...kept, ...factors],
  };
  saveCalibrationFile(file, cal);
  return cal;
}
