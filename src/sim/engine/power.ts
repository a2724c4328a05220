/**
 * The simulated GPUs' power draw and the engine's energy ledger.
 *
 * A step draws, on each of its GPUs, idle power plus a share of the board's dynamic range (max − idle): a floor for a
 * GPU that is running kernels at all (clocks up, SMs and memory controllers awake), plus how hard the step drives the
 * tensor cores and the memory relative to their datasheet peaks (StepCostModel.activity: the step's FLOPs and bytes as
 * seconds at peak, divided by the step's length). Between steps the GPU draws its idle power. The three weights were
 * set on two published anchors (ML.ENERGY benchmark, H100 SXM: ≈300 W decoding at batch 1, ≈600 W at batch 128;
 * compute-bound prefill at TDP); docs/energy.md lists them and the other figures the model was checked against.
 */
import type { StepActivity } from '../cost/step-cost.js';

/** Share of the dynamic range drawn by any running step (clocks up, kernels launched), however light. */
export const ACTIVE_FLOOR = 0.09;
/**
 * Share added per √(tensor-core utilization) (FLOPs at peak / step time). The square root: a decode batch that uses
 * a few percent of the tensor peak already keeps every SM busy (attention, elementwise kernels, GEMMs with small M),
 * and measured power rises steeply with the batch at first and then levels off toward TDP (ML.ENERGY, docs/energy.md).
 */
export const COMPUTE_WEIGHT = 1.45;
/** Share added per unit of memory-bandwidth utilization (bytes at peak / step time). */
export const MEMORY_WEIGHT = 0.3;

export interface GpuPowerSpec {
  idleW: number;
  maxW: number;
}

/** Watts one GPU draws through a step of `stepS` seconds that asks `activity` of it. */
export function stepWatts(p: GpuPowerSpec, activity: StepActivity, stepS: number): number {
  if (!(stepS > 0)) return p.idleW;
  const uc = Math.min(1, activity.computeS / stepS);
  const um = Math.min(1, activity.memoryS / stepS);
  const load = Math.min(1, ACTIVE_FLOOR + COMPUTE_WEIGHT * Math.sqrt(uc) + MEMORY_WEIGHT * um);
  return p.idleW + (p.maxW - p.idleW) * load;
}

/** Breakpoints kept for look-ups into the past (older ones are dropped; the running total is kept). */
const MAX_POINTS = 200_000;

/**
 * Joules drawn per GPU since the engine started, on the engine's clock (ms): power is piecewise constant (one value
 * per step, idle between steps), so the energy at any time is exact. Every GPU of a tensor-parallel deployment runs
 * the same steps and draws the same power.
 */
export class EnergyLedger {
  private times: number[];
  private joules: number[];
  private watts: number;

  constructor(
    readonly gpus: number,
    readonly spec: GpuPowerSpec,
    startMs: number,
  ) {
    this.times = [startMs];
    this.joules = [0];
    this.watts = spec.idleW;
  }

  /** From `ms` on, each GPU draws `watts`. Calls come in time order. */
  set(ms: number, watts: number): void {
    const n = this.times.length - 1;
    const t0 = this.times[n] as number;
    const at = Math.max(ms, t0);
    const e = (this.joules[n] as number) + (this.watts * (at - t0)) / 1000;
    if (at === t0) this.joules[n] = e;
    else {
      this.times.push(at);
      this.joules.push(e);
    }
    this.watts = watts;
    if (this.times.length > MAX_POINTS) {
      this.times = this.times.slice(MAX_POINTS / 2);
      this.joules = this.joules.slice(MAX_POINTS / 2);
    }
  }

  /** Power each GPU draws now. */
  get currentWatts(): number {
    return this.watts;
  }

  /** Joules per GPU drawn from the start to `ms` (times before the oldest kept breakpoint read it). */
  at(ms: number): number {
    const n = this.times.length - 1;
    const last = this.times[n] as number;
    if (ms >= last) return (this.joules[n] as number) + (this.watts * (ms - last)) / 1000;
    let lo = 0;
    let hi = n;
    if (ms <= (this.times[0] as number)) return this.joules[0] as number;
    // times[lo] <= ms < times[hi]
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if ((this.times[mid] as number) <= ms) lo = mid;
      else hi = mid;
    }
    const ta = this.times[lo] as number;
    const tb = this.times[hi] as number;
    const ea = this.joules[lo] as number;
    const eb = this.joules[hi] as number;
    return ea + ((eb - ea) * (ms - ta)) / (tb - ta);
  }

  /** Joules of all the deployment's GPUs together between two times. */
  between(fromMs: number, toMs: number): number {
    return (this.at(toMs) - this.at(fromMs)) * this.gpus;
  }

  /** Mean power of one GPU over the `overMs` before `ms` (what a power gauge averaged over that span reads). */
  averageWatts(ms: number, overMs: number): number {
    if (!(overMs > 0)) return this.watts;
    const from = Math.max(this.times[0] as number, ms - overMs);
    return ms > from ? ((this.at(ms) - this.at(from)) * 1000) / (ms - from) : this.watts;
  }
}
