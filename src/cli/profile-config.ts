import type { RunOptions } from '../config/run-options.js';
import type { ProfileConfig } from '../load/profiles.js';
import type { Workload } from '../workload/types.js';

/** Maps the shared profile flags of `run` and `predict` onto a profile configuration. */
export function buildProfileConfig(opts: RunOptions, workloadFor: (promptTokens: number, outputTokens: number) => Workload): ProfileConfig {
  return {
    profile: opts.profile,
    limits: {
      ...(opts.maxRequests !== undefined ? { maxRequests: opts.maxRequests } : {}),
      ...(opts.maxSeconds !== undefined ? { maxSeconds: opts.maxSeconds } : {}),
      ...(opts.warmupSeconds !== undefined ? { warmupSeconds: opts.warmupSeconds } : {}),
    },
    workload: workloadFor(opts.promptTokens, opts.outputTokens),
    sweepRates: opts.sweepRates,
    sweepArrival: opts.arrival,
    ...(opts.rates ? { rates: opts.rates } : {}),
    ...(opts.concurrencies ? { concurrencies: opts.concurrencies } : {}),
    ...(opts.burstiness !== undefined ? { burstiness: opts.burstiness } : {}),
    ...(opts.maxConcurrency !== undefined ? { maxConcurrency: opts.maxConcurrency } : {}),
    ...(opts.inputLens && opts.outputLens
      ? { grid: { inputLens: opts.inputLens, outputLens: opts.outputLens, numPrompts: opts.numPrompts, workloadFor } }
      : {}),
  };
}
