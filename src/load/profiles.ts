import type { StageSummary } from '../metrics/summary.js';
import type { Workload } from '../workload/types.js';
import type { ArrivalKind, StageLimits, StageSpec } from './types.js';

export const PROFILE_NAMES = ['synchronous', 'concurrent', 'throughput', 'constant', 'poisson', 'sweep', 'grid', 'replay'] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];

export interface ProfileConfig {
  profile: ProfileName;
  limits: StageLimits;
  /** The workload for every stage except grid cells. */
  workload: Workload;
  rates?: number[];
  concurrencies?: number[];
  /** Async rates a sweep places between its synchronous and throughput rates (GuideLLM: 9 → 11 rows). */
  sweepRates?: number;
  /** Arrival process for sweep's async stages and for `constant`/`poisson` (fixed by those names). */
  sweepArrival?: ArrivalKind;
  burstiness?: number;
  /** Client-side cap on requests in flight for open-loop and throughput stages. */
  maxConcurrency?: number;
  grid?: {
    inputLens: number[];
    outputLens: number[];
    numPrompts: number;
    workloadFor: (inputTokens: number, outputTokens: number) => Workload;
  };
}

/** Default in-flight cap for throughput stages limited only by time (GuideLLM uses a large worker pool too). */
export const DEFAULT_THROUGHPUT_CONCURRENCY = 256;

/**
 * A profile yields stages one at a time and sees the summaries of the stages already run, which is
 * what a sweep needs (its rates come from the measured synchronous and throughput rates).
 */
export function nextStage(cfg: ProfileConfig, done: readonly StageSummary[]): StageSpec | undefined {
  const { limits, workload } = cfg;
  const i = done.length;
  const throughput = (): StageSpec => ({
    kind: 'burst',
    label: 'throughput',
    limits,
    workload,
    maxConcurrency: cfg.maxConcurrency ?? (limits.maxRequests === undefined ? DEFAULT_THROUGHPUT_CONCURRENCY : undefined),
  });
  const open = (rate: number, arrival: ArrivalKind): StageSpec => ({
    kind: 'open',
    label: `asynchronous@${rate.toFixed(2)} req/sec`,
    limits,
    workload,
    rate,
    arrival,
    ...(cfg.burstiness !== undefined ? { burstiness: cfg.burstiness } : {}),
    ...(cfg.maxConcurrency !== undefined ? { maxConcurrency: cfg.maxConcurrency } : {}),
  });
  switch (cfg.profile) {
    case 'synchronous':
      return i === 0 ? { kind: 'closed', label: 'synchronous', concurrency: 1, limits, workload } : undefined;
    case 'concurrent': {
      const n = cfg.concurrencies?.[i];
      return n === undefined ? undefined : { kind: 'closed', label: `concurrent@${n}`, concurrency: n, limits, workload };
    }
    case 'throughput':
      return i === 0 ? throughput() : undefined;
    case 'constant':
    case 'poisson': {
      const rate = cfg.rates?.[i];
      return rate === undefined ? undefined : open(rate, cfg.profile);
    }
    case 'sweep': {
      if (i === 0) return { kind: 'closed', label: 'synchronous', concurrency: 1, limits, workload };
      if (i === 1) return throughput();
      const rates = sweepRates(done, cfg.sweepRates ?? 9);
      const rate = rates[i - 2];
      return rate === undefined ? undefined : open(rate, cfg.sweepArrival ?? 'constant');
    }
    case 'replay': {
      if (i > 0) return undefined;
      const n = limits.maxRequests ?? workload.size ?? 0;
      const spanMs = n > 1 ? (workload.item(n - 1).arrivalOffsetMs ?? 0) : 0;
      const rate = spanMs > 0 ? ((n - 1) * 1000) / spanMs : n;
      return {
        kind: 'open',
        label: `replay of ${n} requests`,
        limits: { ...limits, maxRequests: n },
        workload,
        rate,
        arrival: 'trace',
        ...(cfg.maxConcurrency !== undefined ? { maxConcurrency: cfg.maxConcurrency } : {}),
      };
    }
    case 'grid': {
      const g = cfg.grid;
      if (!g) return undefined;
      const input = g.inputLens[Math.floor(i / g.outputLens.length)];
      const output = g.outputLens[i % g.outputLens.length];
      if (input === undefined || output === undefined) return undefined;
      return {
        kind: 'burst',
        label: `${input}/${output}`,
        limits: { ...limits, maxRequests: g.numPrompts },
        workload: g.workloadFor(input, output),
        ...(cfg.maxConcurrency !== undefined ? { maxConcurrency: cfg.maxConcurrency } : {}),
      };
    }
  }
}

/** n rates evenly spaced from the synchronous rate (exclusive) to the throughput rate (inclusive), as GuideLLM does. */
export function sweepRates(done: readonly StageSummary[], n: number): number[] {
  const sync = done[0]?.requestThroughput ?? 0;
  const max = done[1]?.requestThroughput ?? 0;
  if (!(sync > 0) || !(max > 0)) return [];
  const lo = Math.min(sync, max);
  const hi = Math.max(sync, max);
  return Array.from({ length: n }, (_, k) => lo + ((hi - lo) * (k + 1)) / n);
}

/** Stage count when known up front (for progress); sweeps know theirs once the first two stages ran. */
export function plannedStageCount(cfg: ProfileConfig): number {
  switch (cfg.profile) {
    case 'synchronous':
    case 'throughput':
    case 'replay':
      return 1;
    case 'concurrent':
      return cfg.concurrencies?.length ?? 0;
    case 'constant':
    case 'poisson':
      return cfg.rates?.length ?? 0;
    case 'sweep':
      return 2 + (cfg.sweepRates ?? 9);
    case 'grid':
      return (cfg.grid?.inputLens.length ?? 0) * (cfg.grid?.outputLens.length ?? 0);
  }
}
