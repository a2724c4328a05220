import { arrivalDispersion, type StageSummary } from '../metrics/summary.js';
import { nextCapacityStep } from './capacity.js';
import type { CapacitySettings } from './capacity-types.js';
import type { Workload } from '../workload/types.js';
import type { ArrivalKind, StageLimits, StageSpec } from './types.js';
import { DEFAULT_EXTEND_FACTOR, DEFAULT_MIN_SAMPLES, FAST_FAILURE_MS, FAST_FAILURE_STREAK, SAMPLE_WINDOW_MAX_MS, type WindowRules } from './window.js';

export const PROFILE_NAMES = ['synchronous', 'concurrent', 'throughput', 'constant', 'poisson', 'sweep', 'grid', 'replay', 'capacity'] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];

export interface ProfileConfig {
  profile: ProfileName;
  limits: StageLimits;
  /** The workload for every stage except grid cells. */
  workload: Workload;
  /** Open-loop rates; Infinity is a row sending `burstRequests` requests all at once (`--rate inf`). */
  rates?: number[];
  /** Size of a `--rate inf` row (default: DEFAULT_BURST_REQUESTS). */
  burstRequests?: number;
  concurrencies?: number[];
  /** Async rates a sweep places between its synchronous and throughput rates (GuideLLM: 9 → 11 rows). */
  sweepRates?: number;
  /** Arrival process for sweep's async stages and for `constant`/`poisson` (fixed by those names). */
  sweepArrival?: ArrivalKind;
  burstiness?: number;
  /** Client-side cap on requests in flight for open-loop and throughput stages. */
  maxConcurrency?: number;
  /** `capacity`: what the search looks for (load/capacity.ts). */
  capacity?: CapacitySettings;
  grid?: {
    inputLens: number[];
    outputLens: number[];
    numPrompts: number;
    workloadFor: (inputTokens: number, outputTokens: number) => Workload;
    /** How each cell's latency columns are measured (the throughput columns always come from the burst). */
    latencyLoad?: GridLatencyLoad;
  };
}

/** Grid latency pass: one request at a time (what seed 004's latency columns assume) or an open-loop rate. */
export type GridLatencyLoad = { kind: 'synchronous'; requests: number } | { kind: 'rate'; rate: number; requests: number };
export const DEFAULT_GRID_LATENCY_REQUESTS = 10;

/** Throughput rows search their in-flight cap from here (window.ts). */
export const ADAPTIVE_CAP = { start: 16, growth: 4, minGain: 0.15 } as const;

/**
 * The steady-window rules of a row (window.ts), or undefined for a batch row measured whole (a burst of
 * --max-requests, a grid cell; trace replays get none either).
 */
export function windowRulesFor(
  kind: StageSpec['kind'], limits: StageLimits, opts: { cap?: number; saturationStop?: boolean; dispersion?: number; sizedToSamples?: boolean } = {},
): WindowRules | undefined {
  if (kind === 'burst' && limits.maxSeconds === undefined) return undefined;
  const measureMs = limits.maxSeconds !== undefined ? limits.maxSeconds * 1000 : undefined;
  return {
    ...(measureMs !== undefined ? { measureMs } : {}),
    ...(limits.maxRequests !== undefined ? { measureRequests: limits.maxRequests } : {}),
    warmupMs: (limits.warmupSeconds ?? 0) * 1000,
    rampHops: kind === 'closed' ? 1 : 2,
    measureRamp: kind === 'closed',
    minSamples: DEFAULT_MIN_SAMPLES,
    extendFactor: DEFAULT_EXTEND_FACTOR,
    ...(opts.sizedToSamples && measureMs !== undefined && limits.maxRequests === undefined ? { sampleWindowMaxMs: SAMPLE_WINDOW_MAX_MS } : {}),
    // Room for a slow first completion; throughput rows also search their cap in the ramp.
    rampLimitMs: kind === 'burst' ? 120_000 : Math.max(30_000, 3 * (measureMs ?? 0)),
    ...(kind === 'burst' && opts.cap === undefined
      ? { adaptiveCap: { ...ADAPTIVE_CAP, max: DEFAULT_THROUGHPUT_CONCURRENCY } }
      : {}),
    fastFailureStreak: FAST_FAILURE_STREAK,
    fastFailureMs: FAST_FAILURE_MS,
    ...(opts.saturationStop && kind === 'open' ? { saturationStop: { ...SATURATION_STOP, dispersion: opts.dispersion ?? 0 } } : {}),
  };
}

/**
 * The most requests an open-loop row (with no --max-concurrency) holds in flight before it stops as over-saturated:
 * the client's connection count for such rows (run-command.ts), so no request ever waits in the client for a
 * connection. A server holding this many requests without keeping up is far past its capacity; the row stops
 * within seconds instead of piling up tens of thousands of requests (and sockets) before its first completion.
 */
export const OPEN_LOOP_MAX_IN_FLIGHT = 4096;

/**
 * Open-loop rows (capacity probes, sweeps, constant and Poisson rates; not trace replays) stop once completions stay under 70% of sends after 20 sends past the first completion (with the
 * queue and first-token latency growing, window.ts): a probe at twice the capacity ends in about a second of
 * queueing instead of a whole row.
 */
export const SATURATION_STOP = { completionShare: 0.7, minSends: 20, confirmMs: 250, maxInFlight: OPEN_LOOP_MAX_IN_FLIGHT } as const;

/** Default in-flight cap for throughput stages limited only by time (GuideLLM uses a large worker pool too). */
export const DEFAULT_THROUGHPUT_CONCURRENCY = 256;

/**
 * A profile yields stages one at a time and sees the summaries of the stages already run, which is
 * what a sweep needs (its rates come from the measured synchronous and throughput rates).
 */
export function nextStage(cfg: ProfileConfig, done: readonly StageSummary[]): StageSpec | undefined {
  const { limits, workload } = cfg;
  const i = done.length;
  // A sweep's rows keep their windows open long enough to hold DEFAULT_MIN_SAMPLES requests (WindowRules.sampleWindowMaxMs):
  // on a slow server, extendFactor × --max-seconds left every row of the default command with too few.
  const sizedToSamples = cfg.profile === 'sweep';
  const throughput = (): StageSpec => {
    const window = windowRulesFor('burst', limits, { ...(cfg.maxConcurrency !== undefined ? { cap: cfg.maxConcurrency } : {}), sizedToSamples });
    return {
      kind: 'burst',
      label: 'throughput',
      limits,
      workload,
      ...(window ? { window } : {}),
      maxConcurrency: cfg.maxConcurrency ?? (limits.maxRequests === undefined ? DEFAULT_THROUGHPUT_CONCURRENCY : undefined),
    };
  };
  const closed = (label: string, concurrency: number, stageLimits = limits): StageSpec => {
    const window = windowRulesFor('closed', stageLimits, { sizedToSamples });
    return { kind: 'closed', label, concurrency, limits: stageLimits, workload, ...(window ? { window } : {}) };
  };
  const open = (rate: number, arrival: ArrivalKind, label = rateLabel(rate)): StageSpec => {
    const window = windowRulesFor('open', limits, { saturationStop: arrival !== 'trace' /* a replay has no rate to be over */, dispersion: arrivalDispersion(arrival, cfg.burstiness), sizedToSamples });
    return {
      kind: 'open',
      label,
      limits,
      workload,
      ...(window ? { window } : {}),
      rate,
      arrival,
      ...(cfg.burstiness !== undefined ? { burstiness: cfg.burstiness } : {}),
      ...(cfg.maxConcurrency !== undefined ? { maxConcurrency: cfg.maxConcurrency } : {}),
    };
  };
  switch (cfg.profile) {
    case 'synchronous':
      return i === 0 ? closed('synchronous', 1) : undefined;
    case 'concurrent': {
      const n = cfg.concurrencies?.[i];
      return n === undefined ? undefined : closed(`concurrent@${n}`, n);
    }
    case 'throughput':
      return i === 0 ? throughput() : undefined;
    case 'constant':
    case 'poisson': {
      const rate = cfg.rates?.[i];
      if (rate === Number.POSITIVE_INFINITY) return allAtOnce(cfg);
      return rate === undefined ? undefined : open(rate, cfg.profile, rateLabel(rate, cfg.rates));
    }
    case 'sweep': {
      if (i === 0) return closed('synchronous', 1);
      if (i === 1) return throughput();
      const rates = sweepRates(done, cfg.sweepRates ?? 9);
      const rate = rates[i - 2];
      return rate === undefined ? undefined : open(rate, cfg.sweepArrival ?? 'constant', rateLabel(rate, rates));
    }
    case 'capacity': {
      const settings = cfg.capacity;
      if (!settings) return undefined;
      const step = nextCapacityStep(done, settings);
      if (!step) return undefined;
      if (step.kind === 'synchronous') {
        // The run's first request is cold (connection set-up, the first pass through client and server): on a busy
        // host it alone can miss the SLO, and one miss in a dozen fails 99% — "capacity: none". Ramp-up, as the
        // open-loop probes' first requests are: the window opens at its completion.
        const sync = closed('synchronous', 1);
        return sync.window ? { ...sync, window: { ...sync.window, measureRamp: false } } : sync;
      }
      const again = step.run > 1 ? ` (run ${step.run})` : '';
      if (step.kind === 'concurrency') return closed(`concurrent@${step.streams}${again}`, step.streams);
      return open(step.rate, settings.arrival, `asynchronous@${step.rate.toFixed(2)} req/sec${again}`);
    }
    case 'replay': {
      if (i > 0) return undefined;
      const n = limits.maxRequests ?? workload.size ?? 0;
      const spanMs = n > 1 ? (workload.item(n - 1).arrivalOffsetMs ?? 0) : 0;
      const rate = spanMs > 0 ? ((n - 1) * 1000) / spanMs : n;
      return {
        kind: 'open',
        // A session trace replays conversations: n sessions, each of several requests.
        label: `replay of ${n} ${'turn' in workload ? 'sessions' : 'requests'}`,
        limits: { ...limits, maxRequests: n },
        workload,
        rate,
        arrival: 'trace',
        ...(cfg.maxConcurrency !== undefined ? { maxConcurrency: cfg.maxConcurrency } : {}),
      };
    }
    case 'grid': {
      // Two stages per cell: the burst (throughput columns), then a low-load pass (latency columns).
      const g = cfg.grid;
      if (!g) return undefined;
      const cell = Math.floor(i / 2);
      const input = g.inputLens[Math.floor(cell / g.outputLens.length)];
      const output = g.outputLens[cell % g.outputLens.length];
      if (input === undefined || output === undefined) return undefined;
      const label = `${input}/${output}`;
      const cellWorkload = g.workloadFor(input, output);
      if (i % 2 === 0) {
        return {
          kind: 'burst',
          label,
          limits: { maxRequests: g.numPrompts },
          workload: cellWorkload,
          grid: { input, output, role: 'throughput' },
          ...(cfg.maxConcurrency !== undefined ? { maxConcurrency: cfg.maxConcurrency } : {}),
        };
      }
      const load = g.latencyLoad ?? { kind: 'synchronous', requests: DEFAULT_GRID_LATENCY_REQUESTS };
      const passLimits: StageLimits = { maxRequests: load.requests };
      const window = windowRulesFor(load.kind === 'rate' ? 'open' : 'closed', passLimits);
      const base = { label: `${label} latency`, limits: passLimits, workload: cellWorkload, grid: { input, output, role: 'latency' as const }, ...(window ? { window } : {}) };
      return load.kind === 'rate'
        ? { ...base, kind: 'open', rate: load.rate, arrival: 'constant' }
        : { ...base, kind: 'closed', concurrency: 1 };
    }
  }
}

/** Requests a `--rate inf` row sends when nothing else says how many (the grid's --num-prompts default). */
export const DEFAULT_BURST_REQUESTS = 100;

/**
 * `--rate inf`: every request of the row sent at t=0 (vLLM's `--request-rate inf`), measured whole from the first
 * send to the last completion, like a grid cell's burst; --max-concurrency still caps what is in flight.
 */
function allAtOnce(cfg: ProfileConfig): StageSpec {
  const n = cfg.burstRequests ?? DEFAULT_BURST_REQUESTS;
  return {
    kind: 'burst',
    label: `all at once (${n} requests)`,
    limits: { maxRequests: n },
    workload: cfg.workload,
    ...(cfg.maxConcurrency !== undefined ? { maxConcurrency: cfg.maxConcurrency } : {}),
  };
}

/**
 * Where the sweep's top rate sits between the synchronous and the throughput rate (1 = at the throughput rate). An
 * open loop at exactly the measured ceiling has no margin for that measurement's own noise: its queue grows, and
 * the row was often stopped as over-saturated with nothing to show (issue 36). 90% of the way keeps the top row
 * next to the knee and steady.
 */
export const SWEEP_TOP_SHARE = 0.9;

/**
 * n rates evenly spaced from the synchronous rate (exclusive) to SWEEP_TOP_SHARE of the way to the throughput rate
 * (inclusive): GuideLLM's sweep, with its top row a little under the measured ceiling rather than at it.
 */
export function sweepRates(done: readonly StageSummary[], n: number): number[] {
  const sync = done[0]?.requestThroughput ?? 0;
  const max = done[1]?.requestThroughput ?? 0;
  if (!(sync > 0) || !(max > 0)) return [];
  const lo = Math.min(sync, max);
  const top = lo + SWEEP_TOP_SHARE * (Math.max(sync, max) - lo);
  return Array.from({ length: n }, (_, k) => lo + ((top - lo) * (k + 1)) / n);
}

/**
 * An open-loop row's label, `asynchronous@0.67 req/sec`, with as many decimals as it takes (up to 6) for every rate
 * of its sweep to read differently: on a server whose synchronous and throughput rates lie close together, 0.666 and
 * 0.675 req/s were both `@0.67`.
 */
export function rateLabel(rate: number, all: readonly number[] = [rate]): string {
  let digits = 2;
  const distinct = (d: number): boolean => new Set(all.map((r) => r.toFixed(d))).size === new Set(all).size;
  while (digits < 6 && !distinct(digits)) digits++;
  return `asynchronous@${rate.toFixed(digits)} req/sec`;
}

/**
 * Where a row stands in its run, for progress lines: "3/11" of a known count (at least the rows run so far), or
 * "probe 3" where the profile decides its rows one at a time (a capacity search: `planned` 0), never a made-up total
 * such as "[6/6]".
 */
export function stageNumberText(index: number, planned: number): string {
  return planned > 0 ? `${index + 1}/${Math.max(planned, index + 1)}` : `probe ${index + 1}`;
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
    case 'capacity':
      return 0; // decided probe by probe
    case 'grid':
      return 2 * (cfg.grid?.inputLens.length ?? 0) * (cfg.grid?.outputLens.length ?? 0);
  }
}
