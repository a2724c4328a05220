import { errorText, type RequestRecord } from '../metrics/record.js';

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
 *    up to `extendFactor` × that — until at least `minSamples` requests were sent in it and it is at least as
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
 * at least `capMinGain`; the first step that does not is the cap the row keeps. The server then has a short
 * queue (it stays saturated) and the drain after the row is a few request latencies, not minutes.
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
  /** ... but no longer than measureMs × this. */
  extendFactor: number;
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
export const FAST_FAILURE_STREAK = 20;
export const FAST_FAILURE_MS = 250;
/** No window stays open longer than this, whatever its requests take. */
export const MAX_WINDOW_MS = 600_000;

/** What the drivers report about a row's window (StageResult.window). */
export interface WindowOutcome {
  /** null for batch rows: the whole row is measured. */
  openAtMs: number | null;
  closeAtMs: number | null;
  /** The window opened at the ramp limit, not because the server had settled. */
  unsettled?: boolean;
  /**
   * The in-flight cap an adaptive throughput row settled on, the completion rate each step reached (queued: its
   * requests waited at the server for over half their latency), and the requests in flight the window measured
   * (time-weighted mean and max between its open and its close): the figures describe that load, whatever the cap.
   */
  capSearch?: CapSearch;
  /** Why sending stopped before the row's limit (e.g. a streak of fast failures). */
  stoppedEarly?: string;
  /** Set (with stoppedEarly) when the row stopped because its queue kept growing; the drivers cancel what is in flight. */
  overSaturated?: string;
}

export interface CapSearch {
  cap: number;
  steps: Array<{ cap: number; completionRate: number; queued?: boolean }>;
  measuredInFlight?: { mean: number; max: number };
}

export class SteadyWindow {
  private phase: 'ramp' | 'window' | 'cooldown' | 'closed';
  /** Measured requests sent and not finished yet: the cool-down lasts until there are none. */
  private measuredOpen = 0;
  /** The row closed the normal way: its window ended and every request measured in it had finished. */
  private measuredAllDone = false;
  private openAt: number | null = null;
  private closeAt: number | null = null;
  private unsettled = false;
  private sentInWindow = 0;
  private completed = 0;
  private failureStreak = 0;
  /** Failures of the current streak sent in the ramp-up (left out of the row's figures). */
  private streakInRamp = 0;
  /** Σ and count of the latencies of requests sent inside the window: a window is at least one of them long. */
  private latencySum = 0;
  private latencyCount = 0;
  private streakError = '';
  private stopped: string | undefined;
  private cap: number;
  private capChangedAt: number;
  /** Latencies (end − sent, and first token) of the settled requests of the current cap step (see stepCap). */
  private roundLatencies: Array<{ e2e: number; ttft: number | undefined }> = [];
  /** Requests sent at or after this time are settled at the current step: its first request completed then. */
  private settledFrom: number | null = null;
  /** The row's shortest time to first token: a request that did not queue at the server. */
  private minTtft = Infinity;
  /** After going back to a lower cap: the ramp may last until then (ms from the row's start), for the queue to drain. */
  private backOffLimitMs = 0;
  private readonly steps: CapSearch['steps'] = [];
  /** Requests in flight over the window: Σ count × ms since the open, when last accumulated, and the most at once. */
  private inFlightArea = 0;
  private trackedAt: number | null = null;
  private maxInFlight = 0;
  private capSettled: boolean;
  /** The ramp ends at the first completion of a request sent at or after this time (null: not known yet). */
  private hopFrom: number | null;
  private rampDone = false;
  private firstCompletionAt: number | null = null;
  private lastCompletionAt = 0;
  /** The window has measured enough: it closes at the next completion (so it spans whole request intervals). */
  private closeAtNextCompletion = false;
  private sentTotal = 0;
  /** At the first completion: sends and requests in flight so far (the over-saturation check counts from there). */
  private atFirst: { sent: number; inFlight: number } | null = null;
  /** First-token and end-to-end latencies of the first and the latest successful completions. */
  private readonly earlyLatencies: Array<[number, number]> = [];
  private readonly recentLatencies: Array<[number, number]> = [];
  private overSaturated: string | undefined;
  /** When the signs of over-saturation began to hold (or were last looked at again), and the requests in flight then. */
  private suspectedAt: { atMs: number; inFlight: number } | null = null;

  constructor(
    private readonly rules: WindowRules | undefined,
    private readonly startMs: number,
    private readonly fixedCap: number,
  ) {
    this.phase = rules ? 'ramp' : 'window';
    const adaptive = rules?.adaptiveCap;
    this.cap = adaptive ? Math.min(adaptive.start, adaptive.max) : fixedCap;
    this.capSettled = adaptive === undefined;
    this.capChangedAt = startMs;
    this.hopFrom = rules?.rampHops === 1 && this.capSettled ? startMs : null;
  }

  /** Requests may be in flight at once now. */
  inFlightCap(): number {
    return this.cap;
  }

  /** Whether a request sent at `now` is measured (false: ramp-up). Call just before sending. */
  onSend(now: number): boolean {
    this.tick(now);
    this.trackInFlight(now);
    this.sentTotal++;
    this.noteMaxInFlight();
    const measured = this.phase === 'window' || (this.phase === 'ramp' && this.rules?.measureRamp === true);
    if (measured) {
      this.sentInWindow++;
      this.measuredOpen++;
    }
    this.checkInFlightLimit(now);
    return measured;
  }

  /** The open loop's in-flight limit (saturationStop.maxInFlight) reached: this send is the row's last. */
  private checkInFlightLimit(now: number): void {
    const limit = this.rules?.saturationStop?.maxInFlight;
    // A client cap (--max-concurrency) already bounds the requests in flight: the user chose it.
    if (limit === undefined || this.fixedCap !== Infinity || this.phase === 'closed') return;
    const inFlight = this.sentTotal - this.completed;
    if (inFlight < limit) return;
    const secs = ((now - this.startMs) / 1000).toFixed(1);
    this.overSaturated =
      `over-saturated: ${inFlight} requests in flight, the most an open loop holds (past it they would wait in the client), ` +
      `${this.completed} completions for ${this.sentTotal} sends in ${secs} s`;
    this.stopped = `stopped early, ${this.overSaturated}`;
    this.close(now);
  }

  /** Sending may go on at `now`. */
  sending(now: number): boolean {
    this.tick(now);
    return this.phase !== 'closed';
  }

  /**
   * A request finished (ok or failed); its send time tells which cap step it belongs to, its `warmup` flag whether
   * it was measured (what onSend said: ramp-up and cool-down requests carry `warmup: true`).
   */
  onComplete(record: Pick<RequestRecord, 'sentAtMs' | 'endAtMs' | 'status' | 'error' | 'ttftMs'> & { warmup?: boolean }): void {
    const { sentAtMs, endAtMs } = record;
    const ok = record.status === 'ok';
    this.trackInFlight(endAtMs);
    this.completed++;
    this.firstCompletionAt ??= endAtMs;
    this.lastCompletionAt = Math.max(this.lastCompletionAt, endAtMs);
    if (record.warmup !== true && this.measuredOpen > 0) this.measuredOpen--;
    if (this.phase === 'cooldown' && this.measuredOpen === 0) this.finishCooldown();
    // The cool-down keeps the load on; it is not where a row is judged over-saturated (its window was).
    if (this.rules?.saturationStop && (this.phase === 'ramp' || this.phase === 'window')) this.checkSaturation(record);
    if (this.closeAtNextCompletion) this.endWindow(endAtMs);
    // Strictly after the open: in virtual time the ramp's last sends share the window's opening instant.
    if (ok && this.openAt !== null && sentAtMs > this.openAt) {
      this.latencySum += endAtMs - sentAtMs;
      this.latencyCount++;
    }
    if (ok || !this.rules) {
      this.failureStreak = 0;
      this.streakInRamp = 0;
    } else if (endAtMs - sentAtMs < this.rules.fastFailureMs) {
      this.failureStreak++;
      if (record.warmup === true) this.streakInRamp++;
      this.streakError = errorText(record) ?? 'failed';
      if (this.failureStreak >= this.rules.fastFailureStreak && this.stopped === undefined) {
        // The table counts measured requests only: say how many of the streak it shows, so the counts agree.
        const split = this.streakInRamp > 0 ? ` (${this.failureStreak - this.streakInRamp} measured, ${this.streakInRamp} in the ramp-up)` : '';
        this.stopped = `stopped after ${this.failureStreak} failures in a row${split}, each within ${this.rules.fastFailureMs} ms (${this.streakError})`;
        this.close(endAtMs);
      }
    } else {
      this.failureStreak = 0;
      this.streakInRamp = 0;
    }
    if (ok && record.ttftMs !== undefined && record.ttftMs !== null && Number.isFinite(record.ttftMs)) this.minTtft = Math.min(this.minTtft, record.ttftMs);
    if (!this.capSettled && sentAtMs >= this.capChangedAt) {
      // The step's first completion: one full latency at this cap has passed; requests sent from now on are settled.
      this.settledFrom ??= endAtMs;
      if (sentAtMs >= this.settledFrom) this.roundLatencies.push({ e2e: endAtMs - sentAtMs, ttft: ok ? (record.ttftMs ?? undefined) : undefined });
    }
    if (this.hopFrom !== null && sentAtMs >= this.hopFrom) this.rampDone = true;
    // The first completion starts the second hop (open loops); a throughput row's hop starts when its cap settles.
    if (this.hopFrom === null && this.capSettled) this.hopFrom = endAtMs;
    this.tick(endAtMs);
  }

  /** Why the row stopped as over-saturated (its requests in flight are then cancelled), if it did. */
  get overSaturatedReason(): string | undefined {
    return this.overSaturated;
  }

  /** Whether the row has stopped sending for good. */
  get closed(): boolean {
    return this.phase === 'closed';
  }

  /** The window has closed and the load stays on until the requests measured in it have finished. */
  get coolingDown(): boolean {
    return this.phase === 'cooldown';
  }

  /**
   * The row ended the normal way: its window closed and every request measured in it has finished. What is still
   * in flight is unmeasured (cool-down, or a ramp-up straggler): the drivers cancel it.
   */
  get measuredRequestsDone(): boolean {
    return this.measuredAllDone;
  }

  /** When the window closed (null while it has not). */
  get closedAtMs(): number | null {
    return this.closeAt;
  }

  outcome(endMs: number): WindowOutcome {
    if (!this.rules) return { openAtMs: null, closeAtMs: null };
    const out: WindowOutcome = {
      openAtMs: this.openAt ?? endMs,
      closeAtMs: this.closeAt ?? endMs,
    };
    if (this.unsettled) out.unsettled = true;
    if (this.rules.adaptiveCap) {
      const open = this.openAt;
      const close = this.closeAt ?? endMs;
      const measured = open !== null && close > open ? { mean: this.inFlightArea / (close - open), max: this.maxInFlight } : undefined;
      out.capSearch = { cap: this.cap, steps: this.steps, ...(measured ? { measuredInFlight: measured } : {}) };
    }
    if (this.stopped) out.stoppedEarly = this.stopped;
    if (this.overSaturated) out.overSaturated = this.overSaturated;
    return out;
  }

  /**
   * Sending stops now, with no cool-down, for an outside reason (the run's signal, a request limit reached by the
   * caller, a drain limit or a silent server) or a stop of the window's own (fast failures, over-saturation).
   */
  close(now: number): void {
    if (this.phase === 'closed') return;
    if (this.openAt === null) this.openAt = now;
    this.trackInFlight(now);
    // Stopped in the cool-down: the window had closed already.
    if (this.phase !== 'cooldown') this.closeAt = now;
    this.phase = 'closed';
  }

  /** The driver stopped the row for a reason of its own (a server that answers nothing): closed at once, saying why. */
  stop(now: number, reason: string): void {
    this.stopped ??= reason;
    this.close(now);
  }

  /** The window has measured enough: it closes, and the load stays on until its measured requests have finished. */
  private endWindow(now: number): void {
    if (this.phase !== 'window') return;
    this.trackInFlight(now);
    this.closeAt = now;
    this.closeAtNextCompletion = false;
    this.phase = 'cooldown';
    if (this.measuredOpen === 0) this.finishCooldown();
  }

  private finishCooldown(): void {
    this.phase = 'closed';
    this.measuredAllDone = true;
  }

  private tick(now: number): void {
    const r = this.rules;
    if (!r || this.phase === 'closed' || this.phase === 'cooldown') return;
    if (this.phase === 'ramp') {
      if (!this.capSettled) this.stepCap(now, r);
      if (now >= this.startMs + r.warmupMs && this.rampDone) {
        this.open(now);
      } else if (now >= this.startMs + Math.max(this.rampLimit(r), r.warmupMs)) {
        this.unsettled = true;
        this.capSettled = true;
        this.open(now);
      }
      return;
    }
    const open = this.openAt as number;
    if (r.measureRequests !== undefined && this.sentInWindow >= r.measureRequests) return this.endWindow(now);
    if (r.measureMs !== undefined) {
      const elapsed = now - open;
      // Enough samples, and at least as long as its own requests take (so its latencies are not mostly drain).
      const meanLatency = this.latencyCount > 0 ? this.latencySum / this.latencyCount : Infinity;
      const enough = this.sentInWindow >= r.minSamples && elapsed >= meanLatency;
      // The extension stops at extendFactor × --max-seconds once a request sent in the window has completed; a
      // window none of whose requests has finished has measured nothing yet (requests slower than the window,
      // as at a throughput row's cap on a slow server), so it waits for one, up to MAX_WINDOW_MS.
      const extended = elapsed >= r.measureMs * r.extendFactor && this.latencyCount > 0;
      // A window that opened on a completion and closes on one holds whole intervals between completions: its
      // count / length is the rate without a fraction of an interval lost or gained at either end.
      if (elapsed >= MAX_WINDOW_MS) this.endWindow(now);
      else if ((elapsed >= r.measureMs && enough) || extended) this.closeAtNextCompletion = true;
    }
  }

  /**
   * How long the ramp may last: the rule's limit; while a throughput row searches, long enough for its current step;
   * for open loops at least 3× the first request's latency (long replies take long) — a second hop that takes longer
   * than that means latency kept growing: the row is not keeping up.
   */
  private rampLimit(r: WindowRules): number {
    // A cap step needs about three latencies at the new cap (the backlog, one latency to settle, its settled
    // requests), which the last step's rate tells (Little's law) — or, at the first step, the completions so far.
    const last = this.steps[this.steps.length - 1];
    const first = this.firstCompletionAt;
    if (!this.capSettled) {
      const rate = last ? last.completionRate : first !== null && first > this.startMs ? (this.completed * 1000) / (Math.max(first, this.lastCompletionAt) - this.startMs) : 0;
      if (rate > 0) return Math.max(r.rampLimitMs, this.capChangedAt - this.startMs + (3000 * this.cap) / rate);
      return r.rampLimitMs;
    }
    const hop = r.rampHops === 2 && first !== null ? Math.max(r.rampLimitMs, 3 * (first - this.startMs)) : r.rampLimitMs;
    return Math.max(hop, this.backOffLimitMs);
  }

  /**
   * An open loop far past capacity only grows its queue: every request of a long row would measure the backlog, and
   * the drain after it would take minutes. Counted from the first completion (before it nothing can complete): when
   * completions stay under `completionShare` of sends, the requests in flight have grown by at least 10 (and half of
   * what was in flight then), and the latest first-token latencies are a quarter above the first ones — and still
   * do, with no fewer requests in flight, `confirmMs` later — the
   * row stops. The confirmation tells a queue that lasts from a hiccup: a host stall of a few hundred ms on a row
   * of 20-ms requests grows the requests in flight and doubles the latest latencies too, then drains.
   */
  private checkSaturation(record: Pick<RequestRecord, 'sentAtMs' | 'endAtMs' | 'status' | 'ttftMs'>): void {
    const rule = this.rules?.saturationStop as NonNullable<WindowRules['saturationStop']>;
    const signs = this.saturationSigns(record, rule);
    if (!signs) {
      this.suspectedAt = null;
      return;
    }
    const now = record.endAtMs;
    if (this.suspectedAt === null) {
      this.suspectedAt = { atMs: now, inFlight: signs.inFlight };
      return;
    }
    if (now - this.suspectedAt.atMs < rule.confirmMs) return;
    // Fewer in flight than when the signs appeared: the backlog is draining. Look again one more period on.
    if (signs.inFlight < this.suspectedAt.inFlight) {
      this.suspectedAt = { atMs: now, inFlight: signs.inFlight };
      return;
    }
    const secs = ((now - (this.firstCompletionAt as number)) / 1000).toFixed(1);
    this.overSaturated =
      `over-saturated: ${signs.completions} completions for ${signs.sends} sends in ${secs} s after the first completion, ` +
      `in flight ${(this.atFirst as { inFlight: number }).inFlight} → ${signs.inFlight}, ${signs.rise}`;
    this.stopped = `stopped early, ${this.overSaturated}`;
    this.close(now);
  }

  /** The three signs of over-saturation at this completion, or undefined when any is missing. */
  private saturationSigns(
    record: Pick<RequestRecord, 'sentAtMs' | 'endAtMs' | 'status' | 'ttftMs'>,
    rule: NonNullable<WindowRules['saturationStop']>,
  ): { sends: number; completions: number; inFlight: number; rise: string } | undefined {
    const latency: [number, number] = [record.ttftMs ?? NaN, record.endAtMs - record.sentAtMs];
    if (record.status === 'ok') {
      if (this.earlyLatencies.length < 5) this.earlyLatencies.push(latency);
      this.recentLatencies.push(latency);
      if (this.recentLatencies.length > 5) this.recentLatencies.shift();
    }
    const inFlight = this.sentTotal - this.completed;
    if (this.atFirst === null) {
      this.atFirst = { sent: this.sentTotal, inFlight: inFlight + 1 };
      return undefined;
    }
    const sends = this.sentTotal - this.atFirst.sent;
    const completions = this.completed - 1;
    // Random arrivals: 2.5 standard deviations of slack, so a burst of Poisson arrivals is not taken for a queue.
    const slack = 2.5 * Math.sqrt(rule.dispersion * sends);
    if (sends < rule.minSends || completions >= rule.completionShare * sends - slack) return undefined;
    const grown = inFlight - this.atFirst.inFlight;
    if (grown < Math.max(10, 0.5 * this.atFirst.inFlight)) return undefined;
    if (this.earlyLatencies.length < 5) return undefined;
    const mean = (xs: Array<[number, number]>, k: 0 | 1): number => xs.reduce((a, b) => a + b[k], 0) / xs.length;
    // Engines that admit everything (vLLM's 256 slots) keep first tokens quick and slow every step instead.
    const [ttft0, ttft1, e2e0, e2e1] = [mean(this.earlyLatencies, 0), mean(this.recentLatencies, 0), mean(this.earlyLatencies, 1), mean(this.recentLatencies, 1)];
    const ttftRose = ttft1 >= 1.25 * ttft0;
    if (!ttftRose && !(e2e1 >= 1.25 * e2e0)) return undefined;
    const rise = ttftRose || Number.isNaN(e2e0) ? `time to first token ${ttft0.toFixed(0)} → ${ttft1.toFixed(0)} ms` : `latency ${(e2e0 / 1000).toFixed(2)} → ${(e2e1 / 1000).toFixed(2)} s`;
    return { sends, completions, inFlight, rise };
  }


  private open(now: number): void {
    this.phase = 'window';
    this.openAt = now;
    this.trackedAt = now;
    this.noteMaxInFlight();
  }

  /**
   * One step of the cap search. With `cap` requests always in flight, the completion rate is cap / mean latency
   * (Little's law) — but only over settled requests: those sent after the step's first request completed, i.e. after
   * one full latency at this cap, once the previous step's backlog has cleared. The requests sent when the step began
   * are not: the first ones never queue (a server with 4 slots answers the first 4 of 16 at once), so their latencies
   * would put the rate of 16 streams at nearly three times what the server delivers. A step whose settled requests
   * waited at the server for over half their latency (time to first token beyond the row's unqueued one) ends the
   * search there: the server already holds a queue, more in flight would only lengthen it. A step that gains less
   * than minGain ends the search: the cap stays there if it still gained half of minGain, or goes back to the
   * previous step — and the window then waits until the requests in flight have fallen to that cap.
   */
  private stepCap(now: number, r: WindowRules): void {
    const a = r.adaptiveCap as NonNullable<WindowRules['adaptiveCap']>;
    const lat = this.roundLatencies;
    if (lat.length < Math.max(this.cap / 2, 8)) return;
    const meanLatency = lat.reduce((x, y) => x + y.e2e, 0) / lat.length;
    const rate = meanLatency > 0 ? (this.cap * 1000) / meanLatency : 0;
    const ttfts = lat.map((x) => x.ttft).filter((x): x is number => x !== undefined && Number.isFinite(x));
    const waited = ttfts.length === lat.length && this.minTtft < Infinity ? ttfts.reduce((x, y) => x + y, 0) / ttfts.length - this.minTtft : 0;
    const queued = waited > 0.5 * meanLatency;
    this.steps.push({ cap: this.cap, completionRate: rate, ...(queued ? { queued: true } : {}) });
    const prev = this.steps[this.steps.length - 2];
    const gained = prev === undefined || rate >= prev.completionRate * (1 + a.minGain);
    if (queued || !gained || this.cap >= a.max) {
      this.capSettled = true;
      // A step that gained under half of minGain mostly adds queue (latency, and a longer drain): go back.
      if (prev && rate < prev.completionRate * (1 + a.minGain / 2)) {
        const inFlight = this.sentTotal - this.completed;
        this.cap = prev.cap;
        // Back to a lower cap: wait one more hop at it. Nothing is sent until the requests in flight have fallen
        // under the cap, so the first request of that hop completes once the higher step's queue is gone. The ramp
        // may last that long: the queue drains at the kept step's rate, then one latency at the cap (×2 for noise).
        this.hopFrom = now;
        if (prev.completionRate > 0) this.backOffLimitMs = now - this.startMs + (2000 * Math.max(inFlight, this.cap)) / prev.completionRate;
      } else {
        this.rampDone = true; // this cap has run for a round already: the load is in place
      }
      return;
    }
    this.cap = Math.min(a.max, Math.round(this.cap * a.growth));
    this.capChangedAt = now;
    this.settledFrom = null;
    this.roundLatencies = [];
  }

  /** Time-weighted requests in flight over the window: accumulated up to `now` (call before the count changes). */
  private trackInFlight(now: number): void {
    if (this.phase !== 'window' || this.trackedAt === null) return;
    const inFlight = this.sentTotal - this.completed;
    this.inFlightArea += inFlight * Math.max(0, now - this.trackedAt);
    this.trackedAt = Math.max(this.trackedAt, now);
  }

  private noteMaxInFlight(): void {
    if (this.phase === 'window') this.maxInFlight = Math.max(this.maxInFlight, this.sentTotal - this.completed);
  }
}
