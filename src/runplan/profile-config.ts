import type { RunOptions } from '../config/run-options.js';
import type { ProfileConfig } from '../load/profiles.js';
import type { Workload } from '../workload/types.js';

/** The workload line of a grid run: its cells, not the (unused) single-row lengths. */
export function gridDescription(opts: RunOptions): string {
  return `grid of input lengths ${(opts.inputLens ?? []).join(', ')} × output lengths ${(opts.outputLens ?? []).join(', ')}, ${opts.numPrompts} prompts per cell sent at once`;
}

/** Header fields for the table: fixed lengths as the seeds print them, else the workload's own words. */
export function lengthContext(opts: RunOptions, description: string): { promptTokens?: number; outputTokens?: number; lengths?: string } {
  if (opts.profile === 'grid') return {};
  const w = opts.workload;
  // Embeddings (batchSize set): the workload's words say the inputs per request, which two lengths cannot.
  const fixed = !w.scenario && !w.promptDist && !w.outputDist && !w.data && !w.trace && !w.turns && opts.batchSize === undefined && !w.images;
  return fixed ? { promptTokens: opts.promptTokens, outputTokens: opts.outputTokens } : { lengths: description };
}

/** Maps the shared profile flags of `run` and `predict` onto a profile configuration. */
export function buildProfileConfig(
  opts: RunOptions,
  workloadFor: (promptTokens: number, outputTokens: number) => Workload,
  workload: Workload = workloadFor(opts.promptTokens, opts.outputTokens),
): ProfileConfig {
  return {
    profile: opts.profile,
    limits: {
      ...(opts.maxRequests !== undefined ? { maxRequests: opts.maxRequests } : {}),
      ...(opts.maxSeconds !== undefined ? { maxSeconds: opts.maxSeconds } : {}),
      ...(opts.warmupSeconds !== undefined ? { warmupSeconds: opts.warmupSeconds } : {}),
    },
    workload,
    sweepRates: opts.sweepRates,
    sweepArrival: opts.arrival,
    ...(opts.rates ? { rates: opts.rates } : {}),
    // A --rate inf row sends --max-requests requests at once, else --num-prompts (the grid's burst size).
    ...(opts.rates?.includes(Number.POSITIVE_INFINITY) ? { burstRequests: opts.maxRequests ?? opts.numPrompts } : {}),
    ...(opts.concurrencies ? { concurrencies: opts.concurrencies } : {}),
    ...(opts.burstiness !== undefined ? { burstiness: opts.burstiness } : {}),
    ...(opts.maxConcurrency !== undefined ? { maxConcurrency: opts.maxConcurrency } : {}),
    ...(opts.capacity ? { capacity: opts.capacity } : {}),
    ...(opts.inputLens && opts.outputLens
      ? { grid: { inputLens: opts.inputLens, outputLens: opts.outputLens, numPrompts: opts.numPrompts, workloadFor, latencyLoad: opts.gridLatencyLoad } }
      : {}),
  };
}
