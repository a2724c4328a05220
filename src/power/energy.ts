/**
 * A row's `energy` (results/energy.ts) from its window and the joules drawn in it: per-token figures over the same
 * window the row's throughput divides by (tokens generated in the window = output token throughput × its length),
 * and only from a valid window.
 */
import type { Energy } from '../results/energy.js';
import type { StageSummary } from '../results/stage.js';
import { gpuWindowEnergy, MAX_GAP_MS, MIN_COVERAGE } from './integrate.js';
import type { PowerSample } from './samples.js';

/** Where a row's window lay on the run's clock (ms), or undefined for a row without one. */
export function rowWindow(s: Pick<StageSummary, 'window' | 'durationS'>): { fromMs: number; toMs: number } | undefined {
  const from = s.window?.fromMs;
  const to = s.window?.toMs;
  return from !== undefined && to !== undefined && to > from ? { fromMs: from, toMs: to } : undefined;
}

export interface WindowJoules {
  joules: number;
  coverage: number;
  maxGapMs: number;
  gpus: number[];
  source: string;
  /** Why the readings cannot stand for the window, beyond coverage and gaps (e.g. a GPU asked for that never reported). */
  problem?: string;
}

/** The energy object of a row whose window drew `w.joules`. */
export function rowEnergy(s: StageSummary, w: WindowJoules, windowS: number): Energy {
  const reasons: string[] = [];
  if (w.problem) reasons.push(w.problem);
  if (w.coverage < MIN_COVERAGE) reasons.push(`power readings covered ${(w.coverage * 100).toFixed(1)}% of the window (at least ${MIN_COVERAGE * 100}% needed)`);
  if (w.maxGapMs > MAX_GAP_MS) reasons.push(`a gap of ${(w.maxGapMs / 1000).toFixed(2)} s between power readings (at most ${MAX_GAP_MS / 1000} s allowed)`);
  const valid = reasons.length === 0;
  const outputTokens = s.outputTokenThroughput * s.durationS;
  const totalTokens = s.totalTokenThroughput * s.durationS;
  const requests = s.requestThroughput * s.durationS;
  const per = (n: number): number | undefined => (valid && Number.isFinite(n) && n > 0 ? w.joules / n : undefined);
  const perOutput = per(outputTokens);
  const perRequest = per(requests);
  const perTotal = per(totalTokens);
  return {
    joules: w.joules,
    avgWatts: windowS > 0 ? w.joules / windowS : 0,
    ...(perOutput !== undefined ? { joulesPerOutputToken: perOutput } : {}),
    ...(perRequest !== undefined ? { joulesPerRequest: perRequest } : {}),
    ...(perTotal !== undefined ? { joulesPerTotalToken: perTotal } : {}),
    gpus: w.gpus,
    source: w.source,
    coverage: w.coverage,
    valid,
    ...(valid ? {} : { reason: reasons.join('; ') }),
  };
}

/**
 * Joules of the chosen GPUs (all the readings name when `gpus` is undefined) over [fromMs, toMs]: the sum over GPUs,
 * the lowest coverage and the longest gap of any of them.
 */
export function windowJoules(samples: readonly PowerSample[], fromMs: number, toMs: number, source: string, gpus?: readonly number[]): WindowJoules {
  const byGpu = new Map<number, PowerSample[]>();
  for (const x of samples) {
    let list = byGpu.get(x.gpu);
    if (!list) byGpu.set(x.gpu, (list = []));
    list.push(x);
  }
  const reported = [...byGpu.keys()].sort((a, b) => a - b);
  const chosen = gpus ? [...gpus] : reported;
  const missing = chosen.filter((g) => !byGpu.has(g));
  let joules = 0;
  let coverage = chosen.length > 0 ? 1 : 0;
  let maxGapMs = chosen.length > 0 ? 0 : toMs - fromMs;
  for (const g of chosen) {
    const list = byGpu.get(g);
    if (!list) continue;
    list.sort((a, b) => a.t - b.t);
    const e = gpuWindowEnergy(list, fromMs, toMs);
    joules += e.joules;
    coverage = Math.min(coverage, e.coverage);
    maxGapMs = Math.max(maxGapMs, e.maxGapMs);
  }
  const problem = missing.length > 0
    ? `no power readings for GPU ${missing.join(', ')} (the source reported ${reported.length ? reported.filter((g) => g >= 0).join(', ') || 'one total' : 'nothing'})`
    : chosen.length === 0 ? 'no power readings' : undefined;
  // −1 is a source's one total over its GPUs: results list no index for it.
  return { joules, coverage: missing.length > 0 ? 0 : coverage, maxGapMs, gpus: chosen.filter((g) => g >= 0), source, ...(problem ? { problem } : {}) };
}
