import { realClock } from '../core/clock.js';
import type { RequestRecord } from '../metrics/record.js';
import { runStage, type RequestToSend, type StageDriverOptions } from './stage-driver.js';
import type { StageResult, StageSpec } from './types.js';

export { REPEAT_SEED_STRIDE, driveStage, runStage, type RequestToSend, type StageDriverOptions, type StartRequest } from './stage-driver.js';
/** Default request count for burst (throughput) stages with no limit at all: the one `--rate inf` uses. */
export { DEFAULT_BURST_REQUESTS } from './profiles.js';

/**
 * Sends one request — or, for a multi-turn workload, one whole conversation — and resolves with its
 * record(s). Request failures are data, never rejections. Extra turns take ids from `allocateId`.
 */
export type ExecuteRequest = (req: RequestToSend) => Promise<RequestRecord>;

export interface DriverOptions extends Omit<StageDriverOptions, 'clock' | 'start'> {
  execute: ExecuteRequest;
}

/**
 * Runs one stage on the real clock: the load driver (stage-driver.ts) with performance.now() and real timers,
 * each request a promise from `execute`. `predict` runs the same driver on a virtual clock (sim/virtual-runner.ts).
 */
export function runStageRealtime(spec: StageSpec, index: number, firstRequestId: number, opts: DriverOptions): Promise<StageResult> {
  const { execute, ...rest } = opts;
  return runStage(spec, index, firstRequestId, {
    ...rest,
    clock: realClock,
    start: (req, done, fail) => void execute(req).then(done, fail),
  });
}
