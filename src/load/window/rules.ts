/**
 * The steady window of a row, decided online and the same way in real and virtual time.
 *
 * A row promises a load (a rate, N streams, saturation). Until the server has filled up to that load its
 * figures describe a ramp, not the load; after sending stops they describe a drain. So a row goes through
 * three phases:
 *  - ramp: until the load has been applied for one full request latency, and any `--warmup` has passed. Closed
 *    loops keep their N requests in flight from the start: their ramp ends when the first request completes.
 *    Open loops fill up over a latency whose length grows with the load: their ramp ends when a request sent
 *    after the first completion completes (two hops; by then the requests in flight are those of the load the
 *    row promises). Throughput rows first search their in-flight cap (below), then wait one hop at that cap.
 *    Requests an open loop or a throughput row sends in the ramp are kept on disk and left out of the figures;
 *    a closed loop's are measured (they ran under the promised N in flight), only its rates wait for the window.
 *  - window: requests sent now are measured. It lasts `--max-seconds` (time-limited rows), kept open longer —
 *    up to `extendFactor` × that, or for a sweep's rows as long as `minSamples` take at the rate the row sends
 *    (up to `sampleWindowMaxMs`) — until at least `minSamples` requests were sent in it and it is at least as
 *    long as the mean latency of its own requests; or until `--max-requests` requests were sent in it
 *    (count-limited rows).
 *  - cool-down: the window has closed, but the load stays on — at the row's own arrival process, streams or
 *    in-flight cap — until every request measured in the window has finished, as MLPerf LoadGen and GuideLLM do:
 *    a request sent late in the window would otherwise finish on a draining server and run fast (latency near
 *    saturation would read low). What the cool-down sends is not measured (kept on disk, flagged `warmup` and
 *    `cooldown`, left out of the figures). Only completions inside the window count towards throughput.
 *  - closed: sending stops; the drivers cancel what is still in flight (cool-down requests only). A row stopped
 *    for an outside reason, a streak of fast failures or over-saturation closes at once, with no cool-down.
 * Batch rows (grid cells, bursts of --max-requests, trace replays) have no window: everything they send is
 * measured from the first send to the last completion, as vLLM's throughput benchmark does.
 *
 * Throughput rows (everything at once) with no --max-concurrency do not flood the server: the cap on requests
 * in flight starts at `capStart` and is multiplied by `capGrowth` while each step raises the completion rate by
 * at least `capMinGain`; the first step that does not is the cap the row keeps, and a step whose requests queued
 * at the server goes down to what the server served at once (its slots). The server then has no queue or a short
 * one (it stays saturated) and the drain after the row is a few request latencies, not minutes.
 *
 * Each job is one unit in this folder, composed by SteadyWindow (./steady-window.ts): the ramp (./ramp.ts) and the
 * window's length (./window-length.ts) open and close the window; the cap search (./cap-search.ts), the
 * over-saturation stop (./saturation-stop.ts) and the fast-failure stop (./failure-streak.ts) each decide one thing;
 * the counts (./counts.ts) keep what they all read.
 */
export interface WindowRules {
  /** Window length for time-limited rows, ms. */
  measureMs?: number;
  /** Requests to measure for count-limited rows. */
  measureRequests?: number;
  /** The window never opens before the row's start + this (`--warmup`). */
  warmupMs: number;
  /** A time-limited window stays open until this many requests were sent in it ... */
  minSamples: number;
  /** ... but no longer than measureMs × this ... */
  extendFactor: number;
  /**
   * ... or, where set (sweep rows), as long as minSamples take at the rate requests are sent in the window (a
   * quarter more for noise), up to this many ms: a sweep's rows then describe their load on a slow server too.
   */
  sampleWindowMaxMs?: number;
  /** The window opens at the latest this long after the row's start, settled or not. */
  rampLimitMs: number;
  /** Hops of ramp-up: 1 = until the first completion (closed loops), 2 = one more request latency (open loops, bursts). */
  rampHops: 1 | 2;
  /**
   * Closed loops hold their N requests in flight from the first send, so what they send during the ramp is under
   * the promised load already: it is measured (and counts towards --max-requests); only the rates wait for the window.
   */
  measureRamp: boolean;
  /** Adaptive in-flight cap (throughput rows without --max-concurrency). */
  adaptiveCap?: { start: number; max: number; growth: number; minGain: number };
  /** Stop the row after this many failures in a row, each faster than fastFailureMs (a server that refuses everything). */
  fastFailureStreak: number;
  fastFailureMs: number;
  /**
   * Stop an open-loop row that is clearly over-saturated (capacity probes): since the first completion, completions
   * fell under `completionShare` of sends, the requests in flight kept growing and time to first token rose.
   */
  saturationStop?: {
    completionShare: number;
    minSends: number;
    /** Arrival-count variance over mean (0 constant, 1 Poisson). */
    dispersion: number;
    /** The signs must still hold, with no fewer requests in flight, this long after they first did. */
    confirmMs: number;
    /**
     * An open loop with no client cap (--max-concurrency) stops as over-saturated when this many of its requests are
     * in flight at once, completions or not: past the client's connections (4096) requests would wait in the client,
     * and a server that has not answered the first ones yet is far past what it holds.
     */
    maxInFlight?: number;
  };
}

export const DEFAULT_MIN_SAMPLES = 20;
/** Why a cool-down request was cancelled (its record's error message). */
export const COOLDOWN_OVER = 'cool-down over: every request measured in the window had finished';
export const DEFAULT_EXTEND_FACTOR = 3;
/**
 * The longest a sweep row's window stays open to gather minSamples (WindowRules.sampleWindowMaxMs): 20 requests of
 * 6 s one at a time. Past it the row says it held too few, and which --max-seconds would hold enough.
 */
export const SAMPLE_WINDOW_MAX_MS = 120_000;
/** A sized window allows minSamples × this at the rate it sends: sends are not perfectly even. */
export const SAMPLE_WINDOW_MARGIN = 1.25;
export const FAST_FAILURE_STREAK = 20;
export const FAST_FAILURE_MS = 250;
/** No window stays open longer than this, whatever its requests take. */
export const MAX_WINDOW_MS = 600_000;

/** What the drivers report about a row's window (StageResult.window): declared beside the summary's input. */
export type { WindowOutcome } from '../../metrics/stage-input.js';

/** The cap search's record is part of the results schema (results/stage.ts). */
export type { CapSearch } from '../../results/stage.js';

export type AdaptiveCapRule = NonNullable<WindowRules['adaptiveCap']>;
export type SaturationRule = NonNullable<WindowRules['saturationStop']>;
