import type { RequestRecord } from '../../metrics/record.js';
import type { AdaptiveCapRule, CapSearch } from './rules.js';

/** How a search step ended: on to another cap (undefined), keeping this cap, or back to an earlier step's cap. */
export type CapStepEnd = 'kept' | 'backed-off' | undefined;

/**
 * The in-flight cap of a throughput row (everything at once) with no --max-concurrency, searched in its ramp.
 *
 * With `cap` requests always in flight, the completion rate is cap / mean latency (Little's law) — but only over
 * settled requests: those sent after the step's first request completed, i.e. after one full latency at this cap,
 * once the previous step's backlog has cleared. The requests sent when the step began are not: the first ones never
 * queue (a server with 4 slots answers the first 4 of 16 at once), so their latencies would put the rate of 16
 * streams at nearly three times what the server delivers. A step that gains less than minGain ends the search: the
 * cap stays there if it still gained half of minGain, or goes back to the previous step — and the window then waits
 * until the requests in flight have fallen to that cap. Without an adaptive rule the cap is fixed and settled.
 *
 * A step whose settled requests waited at the server for over half their latency (time to first token beyond the
 * row's unqueued one) found a queue: more in flight would only lengthen it, and what is in flight beyond what the
 * server serves at once only waits. The search then goes down to that number (servingAtOnce): a llama.cpp server
 * with 4 slots queued 12 of the first step's 16 and the row measured a 12-deep queue (TTFT 14.6 s). One step at
 * that cap checks it: it stays if it kept the queued step's completion rate within minGain, else the cap goes back
 * up to the queued step's.
 */
export class InFlightCapSearch {
  private current: number;
  private isSettled: boolean;
  private changedAt: number;
  /** Latencies (end − sent, and first token) of the settled requests of the current step. */
  private round: Array<{ e2e: number; ttft: number | undefined }> = [];
  /**
   * The streaming spans (first → last token) of the successes that finished during the current step, cut at its
   * start: how many the server was generating for at once (servingAtOnce). A request waiting in its queue streams nothing.
   */
  private spans: Array<[number, number]> = [];
  /** Requests sent at or after this time are settled at the current step: its first request completed then. */
  private settledFrom: number | null = null;
  /** The row's shortest time to first token: a request that did not queue at the server. */
  private minTtft = Infinity;
  /** After going back to another cap: the ramp may last until then (ms from the row's start), for the queue to drain. */
  private backOffUntilMs = 0;
  /** The current step went down to what the server served at once: the requests then in flight beyond the new cap. */
  private descent: { backlog: number } | undefined;
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

  /** After a move back to an earlier step's cap, how long the ramp may last (ms from the row's start); 0 otherwise. */
  get backOffLimitMs(): number {
    return this.backOffUntilMs;
  }

  /** The ramp ran out before the search ended: the current cap stays. */
  settle(): void {
    this.isSettled = true;
  }

  /** A finished request: the row's quickest first token, and the current step's settled latencies and streaming spans. */
  onComplete(record: Pick<RequestRecord, 'sentAtMs' | 'endAtMs' | 'status' | 'ttftMs'> & Partial<Pick<RequestRecord, 'firstTokenAtMs' | 'lastTokenAtMs'>>): void {
    const ok = record.status === 'ok';
    if (ok && record.ttftMs !== undefined && record.ttftMs !== null && Number.isFinite(record.ttftMs)) this.minTtft = Math.min(this.minTtft, record.ttftMs);
    if (this.isSettled) return;
    const first = record.firstTokenAtMs;
    const last = record.lastTokenAtMs;
    // Requests sent in an earlier step still held the server during this one.
    if (ok && first !== undefined && last !== undefined && Number.isFinite(first) && last > Math.max(first, this.changedAt)) this.spans.push([Math.max(first, this.changedAt), last]);
    if (record.sentAtMs < this.changedAt) return;
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
    const serving = queued ? this.servingAtOnce(rate, meanLatency, waited) : undefined;
    const earlier = [...this.steps];
    this.steps.push({ cap: this.current, completionRate: rate, ...(queued ? { queued: true } : {}), ...(serving !== undefined ? { servingAtOnce: serving } : {}) });
    if (this.descent) {
      // The step at what the server served at once: it stays unless it lost the best rate found (then back up there).
      // It was chosen on the queue's evidence, not on a rate; one short step's rate on a server sharing the client's
      // cores moves by more than half of minGain (a 4-slot llama.cpp: 31.04 against 33.78 req/s, −8.1%, with nothing
      // else running), so only a loss beyond minGain itself says the server needs more in flight.
      this.isSettled = true;
      const best = earlier.reduce((x, y) => (y.completionRate > x.completionRate ? y : x));
      if (rate >= best.completionRate * (1 - a.minGain)) return 'kept';
      return this.moveBack(best, now, inFlight);
    }
    if (serving !== undefined && serving < this.current) {
      // A queue at the server: down to what it serves at once (or to that step, if one ran there already).
      const there = earlier.find((x) => x.cap === serving);
      if (there) {
        this.isSettled = true;
        return this.moveBack(there, now, inFlight);
      }
      this.descent = { backlog: Math.max(0, inFlight - serving) };
      this.moveTo(serving, now);
      return undefined;
    }
    const prev = earlier[earlier.length - 1];
    const gained = prev === undefined || rate >= prev.completionRate * (1 + a.minGain);
    if (queued || !gained || this.current >= a.max) {
      this.isSettled = true;
      // A step that gained under half of minGain mostly adds queue (latency, and a longer drain): go back.
      if (prev && rate < prev.completionRate * (1 + a.minGain / 2)) return this.moveBack(prev, now, inFlight);
      return 'kept'; // this cap has run for a round already: the load is in place
    }
    this.moveTo(Math.min(a.max, Math.round(this.current * a.growth)), now);
    return undefined;
  }

  /**
   * While searching, how long the ramp may last: long enough for the current step. A step needs about three
   * latencies at the new cap (the backlog, one latency to settle, its settled requests), which the last step's rate
   * tells (Little's law) — or, at the first step, the completions so far. A step down first waits for the requests
   * in flight beyond its cap to finish.
   */
  rampLimitMs(ruleLimitMs: number, counts: { completed: number; firstCompletionAt: number | null; lastCompletionAt: number }): number {
    const last = this.steps[this.steps.length - 1];
    const first = counts.firstCompletionAt;
    const rate = last
      ? last.completionRate
      : first !== null && first > this.startMs
        ? (counts.completed * 1000) / (Math.max(first, counts.lastCompletionAt) - this.startMs)
        : 0;
    // A step down: its backlog drains, one latency settles it, its settled requests are sent and finish (×1.5 for noise).
    const requests = this.descent ? 1.5 * (this.descent.backlog + 2 * this.current + Math.max(this.current / 2, 8)) : 3 * this.current;
    if (rate > 0) return Math.max(ruleLimitMs, this.changedAt - this.startMs + (1000 * requests) / rate);
    return ruleLimitMs;
  }

  /** A new step at `cap` from `now`: its settled requests and spans are counted afresh. */
  private moveTo(cap: number, now: number): void {
    this.current = cap;
    this.changedAt = now;
    this.settledFrom = null;
    this.round = [];
    this.spans = [];
  }

  /**
   * The search ends at an earlier step's cap. The ramp waits one more hop at it: nothing is sent until the requests in
   * flight have fallen under the cap, so that hop's first request completes once the higher step's queue is gone. The
   * ramp may last that long: the queue drains at the kept step's rate, then one latency at the cap (×2 for noise).
   */
  private moveBack(to: CapSearch['steps'][number], now: number, inFlight: number): CapStepEnd {
    this.current = to.cap;
    if (to.completionRate > 0) this.backOffUntilMs = now - this.startMs + (2000 * Math.max(inFlight, this.current)) / to.completionRate;
    return 'backed-off';
  }

  /**
   * How many requests the server served at once in this step: the most streaming at one moment (a request waiting in
   * the server's queue streams nothing, one in a slot does most of its time) — or, without token times, Little's law
   * on the time not spent waiting: rate × (latency − wait).
   */
  private servingAtOnce(rate: number, meanLatencyMs: number, waitedMs: number): number {
    const edges = this.spans.flatMap(([from, to]): Array<[number, number]> => [[from, 1], [to, -1]]);
    // At one instant a stream that ends frees its slot before the next begins.
    edges.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    let now = 0;
    let most = 0;
    for (const [, d] of edges) {
      now += d;
      most = Math.max(most, now);
    }
    if (most > 0) return most;
    return Math.max(1, Math.round((rate * (meanLatencyMs - waitedMs)) / 1000));
  }
}
