import { capacityResult } from '../load/capacity.js';
import type { CapacityResult, CapacitySettings } from '../load/capacity-types.js';
import { runBenchmark } from '../load/benchmark.js';
import type { StageLimits } from '../load/types.js';
import type { StageSummary } from '../metrics/summary.js';
import type { Workload } from '../workload/types.js';
import type { SimEngineOptions } from './create.js';
import { createVirtualStageRunner } from './virtual-runner.js';

export interface PredictCapacityOptions {
  engine: SimEngineOptions;
  settings: CapacitySettings;
  workload: Workload;
  /** Each probe's limits, as `--max-seconds`/`--max-requests`/`--warmup` give them (default: 5-s windows). */
  limits: StageLimits;
  seed: number;
}

/**
 * The capacity search of `--profile capacity`, answered by the simulator in virtual time: the same profile, the same
 * window rules and the same decisions as against a real server (plan runs one per candidate deployment).
 */
export async function predictCapacity(o: PredictCapacityOptions): Promise<{ result: CapacityResult; stages: StageSummary[] }> {
  const runner = createVirtualStageRunner(o.engine, { seed: o.seed, energy: false });
  const limits = o.limits.maxSeconds === undefined && o.limits.maxRequests === undefined ? { ...o.limits, maxSeconds: 5 } : o.limits;
  // Virtual time has no host noise: a keep-up failure is not run again (load/capacity.ts ambiguous).
  const run = await runBenchmark({ profile: 'capacity', limits, workload: o.workload, capacity: { ...o.settings, virtualTime: true } }, runner, { slo: o.settings.slo });
  return { result: capacityResult(run.stages, o.settings), stages: run.stages };
}
