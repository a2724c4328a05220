import type { WindowRules } from './rules.js';

/** Why the window opens: the load is in place, or the ramp ran out of time first (`unsettled`). */
export type RampEnd = 'settled' | 'unsettled' | undefined;

/**
 * The ramp: when the row's load is in place and the window may open. The load has been applied for one full
 * request latency once a request sent at or after `hopFrom` completes: closed loops (1 hop) count from the row's
 * start; open loops (2 hops) from the first completion; a throughput row from when its cap search settles (or from
 * a back-off to a lower cap). The window never opens before `--warmup`, and opens at the latest at the ramp limit.
 */
export class Ramp {
  /** The ramp ends at the first completion of a request sent at or after this time (null: not known yet). */
  private hopFrom: number | null;
  private done = false;
  /** A request was sent at or after hopFrom: the hop has something to complete. */
  private sentInHop = false;

  constructor(
    private readonly rules: Pick<WindowRules, 'rampHops' | 'rampLimitMs' | 'warmupMs'>,
    private readonly startMs: number,
    capSettled: boolean,
  ) {
    this.hopFrom = rules.rampHops === 1 && capSettled ? startMs : null;
  }

  /** A request is sent at `now`. */
  onSend(now: number): void {
    if (this.hopFrom !== null && now >= this.hopFrom) this.sentInHop = true;
  }

  /** A request sent at `sentAtMs` finished at `endAtMs`; `capSettled`: the in-flight cap is final. */
  onComplete(sentAtMs: number, endAtMs: number, capSettled: boolean): void {
    if (this.hopFrom !== null && sentAtMs >= this.hopFrom) this.done = true;
    // The first completion starts the second hop (open loops); a throughput row's hop starts when its cap settles.
    if (this.hopFrom === null && capSettled) this.hopFrom = endAtMs;
  }

  /** The cap search kept a cap that has already run for a round: the load is in place. */
  loadInPlace(): void {
    this.done = true;
  }

  /** The cap search went back to a lower cap at `now`: wait one more hop at it. */
  hopAgain(now: number): void {
    this.hopFrom = now;
    this.sentInHop = false;
  }

  /**
   * How long the ramp may last once the cap is settled: the rule's limit, for open loops at least 3× the first
   * request's latency (long replies take long) — a second hop that takes longer means latency kept growing: the
   * row is not keeping up — and after a cap back-off, long enough for the queue to drain (`backOffLimitMs`).
   */
  limitMs(firstCompletionAt: number | null, backOffLimitMs: number): number {
    const r = this.rules;
    const hop = r.rampHops === 2 && firstCompletionAt !== null ? Math.max(r.rampLimitMs, 3 * (firstCompletionAt - this.startMs)) : r.rampLimitMs;
    return Math.max(hop, backOffLimitMs);
  }

  /** Whether the window opens at `now`, given how long the ramp may last (`limitMs`, from the row's start). */
  endsAt(now: number, limitMs: () => number): RampEnd {
    const warm = this.startMs + this.rules.warmupMs;
    if (now >= warm && this.done) return 'settled';
    if (now >= this.startMs + Math.max(limitMs(), this.rules.warmupMs)) {
      // Nothing sent since the hop began (an arrival every 100 s at 0.01 req/s): nothing queued either, so the
      // load is in place — not a sign of latency growing.
      return this.hopFrom !== null && !this.sentInHop ? 'settled' : 'unsettled';
    }
    return undefined;
  }
}
