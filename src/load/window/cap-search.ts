import type { RequestRecord } from '../../metrics/record.js';
import type { AdaptiveCapRule, CapSearch } from './rules.js';

/** How a search step ended: on to a higher cap (undefined), keeping this cap, or back to the previous one. */
export type CapStepEnd = 'kept' | 'backed-off' | undefined;

/**
 * The in-flight cap of a throughput row (everything at once) with no --max-concurrency, searched in its ramp.
 *
 * With `cap` requests always in flight, the completion rate is cap / mean latency (Little's law) — but only over
 * settled requests: those sent after the step's first request completed, i.e. after one full latency at this cap,
 * once the previous step's backlog has cleared. The requests sent when the step began are not: the first ones never
 * queue (a server with 4 slots answers the first 4 of 16 at once), so their latencies would put the rate of 16
 * streams at nearly three times what the server delivers. A step whose settled requests waited at the server for
 * over half their latency (time to first token beyond the row's unqueued one) ends the search there: the server
 * already holds a queue, more in flight would only lengthen it. A step that gains less than minGain ends the search:
 * the cap stays there if it still gained half of minGain, or goes back to the previous step — and the window then
 * waits until the requests in flight have fallen to that cap. Without an adaptive rule the cap is fixed and settled.
 */
export class InFlightCapSearch {
  private current: number;
  private isSettled: boolean;
  private changedAt: number;
  /** Latencies (end − sent, and first token) of the settled requests of the current step. */
  private round: Array<{ e2e: number; ttft: number | undefined }> = [];
  /** Requests sent at or after this time are settled at the current step: its first request completed then. */
  private settledFrom: number | null = null;
  /** The row's shortest time to first token: a request that did not queue at the server. */
  private minTtft = Infinity;
  /** After going back to a lower cap: the ramp may last until then (ms from the row's start), for the queue to drain. */
  private backOffUntilMs = 0;
  readonly steps: CapSearch['steps'] = [];

  constructor(
    private readonly rule: AdaptiveCapRule | undefined,
    private readonly startMs: number,
    fixedCap: number,
  ) {
    this.current = rule ? Math.min(rule.start, rule.max) : fixedCap;
    this.isSettled = rule === undefined;
    this.changedAt = startMs;
  }

  get cap(): number {
    return this.current;
  }

  /** The search is over (or there was none): the cap stays. */
  get settled(): boolean {
    return this.isSettled;
  }

  /** After a back-off, how long the ramp may last (ms from the row's start); 0 otherwise. */
  get backOffLimitMs(): number {
    return this.backOffUntilMs;
  }

  /** The ramp ran out before the search ended: the current cap stays. */
  settle(): void {
    this.isSettled = true;
  }

  /** A finished request: the row's quickest first token, and the current step's settled latencies. */
  onComplete(record: Pick<RequestRecord, 'sentAtMs' | 'endAtMs' | 'status' | 'ttftMs'>): void {
    const ok = record.status === 'ok';
    if (ok && record.ttftMs !== undefined && record.ttftMs !== null && Number.isFinite(record.ttftMs)) this.minTtft = Math.min(this.minTtft, record.ttftMs);
    if (this.isSettled || record.sentAtMs < this.changedAt) return;
    // The step's first completion: one full latency at this cap has passed; requests sent from now on are settled.
    this.settledFrom ??= record.endAtMs;
    if (record.sentAtMs >= this.settledFrom) this.round.push({ e2e: record.endAtMs - record.sentAtMs, ttft: ok ? (record.ttftMs ?? undefined) : undefined });
  }

  /** One step of the search at `now`, once the step has enough settled requests; `inFlight`: requests in flight now. */
  step(now: number, inFlight: number): CapStepEnd {
    const a = this.rule;
    if (a === undefined || this.isSettled) return undefined;
    const lat = this.round;
    if (lat.length < Math.max(this.current / 2, 8)) return undefined;
    const meanLatency = lat.reduce((x, y) => x + y.e2e, 0) / lat.length;
    const rate = meanLatency > 0 ? (this.current * 1000) / meanLatency : 0;
    const ttfts = lat.map((x) => x.ttft).filter((x): x is number => x !== undefined && Number.isFinite(x));
    const waited = ttfts.length === lat.length && this.minTtft < Infinity ? ttfts.reduce((x, y) => x + y, 0) / ttfts.length - this.minTtft : 0;
    const queued = waited > 0.5 * meanLatency;
    this.steps.push({ cap: this.current, completionRate: rate, ...(queued ? { queued: true } : {}) });
    const prev = this.steps[this.steps.length - 2];
    const gained = prev === undefined || rate >= prev.completionRate * (1 + a.minGain);
    if (queued || !gained || this.current >= a.max) {
      this.isSettled = true;
      // A step that gained under half of minGain mostly adds queue (latency, and a longer drain): go back.
      if (prev && rate < prev.completionRate * (1 + a.minGain / 2)) {
        this.current = prev.cap;
        // Back to a lower cap: the ramp waits one more hop at it. Nothing is sent until the requests in flight have
        // fallen under the cap, so that hop's first request completes once the higher step's queue is gone. The ramp
        // may last that long: the queue drains at the kept step's rate, then one latency at the cap (×2 for noise).
        if (prev.completionRate > 0) this.backOffUntilMs = now - this.startMs + (2000 * Math.max(inFlight, this.current)) / prev.completionRate;
        return 'backed-off';
      }
      return 'kept'; // this cap has run for a round already: the load is in place
    }
    this.current = Math.min(a.max, Math.round(this.current * a.growth));
    this.changedAt = now;
    this.settledFrom = null;
    this.round = [];
    return undefined;
  }

  /**
   * While searching, how long the ramp may last: long enough for the current step. A step needs about three
   * latencies at the new cap (the backlog, one latency to settle, its settled requests), which the last step's rate
   * tells (Little's law) — or, at the first step, the completions so far.
   */
  rampLimitMs(ruleLimitMs: number, counts: { completed: number; firstCompletionAt: number | null; lastCompletionAt: number }): number {
    const last = this.steps[this.steps.length - 1];
    const first = counts.firstCompletionAt;
    const rate = last
      ? last.completionRate
      : first !== null && first > this.startMs
        ? (counts.completed * 1000) / (Math.max(first, counts.lastCompletionAt) - this.startMs)
        : 0;
    if (rate > 0) return Math.max(ruleLimitMs, this.changedAt - this.startMs + (3000 * this.current) / rate);
    return ruleLimitMs;
  }
}
