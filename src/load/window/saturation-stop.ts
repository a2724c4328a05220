import type { RequestRecord } from '../../metrics/record.js';
import type { SaturationRule } from './rules.js';

/**
 * The fixed parts of the three signs of over-saturation (the rule's own figures, per row, are in SaturationRule):
 * latencies averaged over the first and the latest `latencySamples` successes; the requests in flight must have
 * grown by at least `minGrowth` and by `growthShare` of what was in flight at the first completion; a latency rise
 * is `latencyRise` × the first ones; random arrivals get `slackSd` standard deviations of slack on the counts.
 */
export const SATURATION_SIGNS = { latencySamples: 5, minGrowth: 10, growthShare: 0.5, latencyRise: 1.25, slackSd: 2.5 } as const;

/** What the stop reads of the row's counts at a completion (after counting it). */
export interface SaturationCounts {
  sent: number;
  completed: number;
  firstCompletionAt: number | null;
}

type Finished = Pick<RequestRecord, 'sentAtMs' | 'endAtMs' | 'status' | 'ttftMs'>;

/**
 * An open loop far past capacity only grows its queue: every request of a long row would measure the backlog, and
 * the drain after it would take minutes. Counted from the first completion (before it nothing can complete): when
 * completions stay under `completionShare` of sends, the requests in flight have grown (SATURATION_SIGNS), and the
 * latest first-token latencies are a quarter above the first ones — and still do, with no fewer requests in flight,
 * `confirmMs` later — the row stops. The confirmation tells a queue that lasts from a hiccup: a host stall of a few
 * hundred ms on a row of 20-ms requests grows the requests in flight and doubles the latest latencies too, then drains.
 */
export class SaturationStop {
  /** At the first completion: sends and requests in flight so far (the check counts from there). */
  private atFirst: { sent: number; inFlight: number } | null = null;
  /** First-token and end-to-end latencies of the first and the latest successful completions. */
  private readonly early: Array<[number, number]> = [];
  private readonly recent: Array<[number, number]> = [];
  /** When the signs began to hold (or were last looked at again), and the requests in flight then. */
  private suspectedAt: { atMs: number; inFlight: number } | null = null;

  constructor(private readonly rule: SaturationRule) {}

  /** A completion in the ramp or the window; returns the over-saturated reason once the signs are confirmed. */
  onComplete(record: Finished, counts: SaturationCounts): string | undefined {
    const signs = this.signs(record, counts);
    if (!signs) {
      this.suspectedAt = null;
      return undefined;
    }
    const now = record.endAtMs;
    if (this.suspectedAt === null) {
      this.suspectedAt = { atMs: now, inFlight: signs.inFlight };
      return undefined;
    }
    if (now - this.suspectedAt.atMs < this.rule.confirmMs) return undefined;
    // Fewer in flight than when the signs appeared: the backlog is draining. Look again one more period on.
    if (signs.inFlight < this.suspectedAt.inFlight) {
      this.suspectedAt = { atMs: now, inFlight: signs.inFlight };
      return undefined;
    }
    const secs = ((now - (counts.firstCompletionAt as number)) / 1000).toFixed(1);
    return (
      `over-saturated: ${signs.completions} completions for ${signs.sends} sends in ${secs} s after the first completion, ` +
      `in flight ${(this.atFirst as { inFlight: number }).inFlight} → ${signs.inFlight}, ${signs.rise}`
    );
  }

  /** The three signs at this completion, or undefined when any is missing. */
  private signs(record: Finished, counts: SaturationCounts): { sends: number; completions: number; inFlight: number; rise: string } | undefined {
    const n = SATURATION_SIGNS.latencySamples;
    const latency: [number, number] = [record.ttftMs ?? NaN, record.endAtMs - record.sentAtMs];
    if (record.status === 'ok') {
      if (this.early.length < n) this.early.push(latency);
      this.recent.push(latency);
      if (this.recent.length > n) this.recent.shift();
    }
    const inFlight = counts.sent - counts.completed;
    if (this.atFirst === null) {
      this.atFirst = { sent: counts.sent, inFlight: inFlight + 1 };
      return undefined;
    }
    const sends = counts.sent - this.atFirst.sent;
    const completions = counts.completed - 1;
    // Random arrivals: slack of a few standard deviations, so a burst of Poisson arrivals is not taken for a queue.
    const slack = SATURATION_SIGNS.slackSd * Math.sqrt(this.rule.dispersion * sends);
    if (sends < this.rule.minSends || completions >= this.rule.completionShare * sends - slack) return undefined;
    const grown = inFlight - this.atFirst.inFlight;
    if (grown < Math.max(SATURATION_SIGNS.minGrowth, SATURATION_SIGNS.growthShare * this.atFirst.inFlight)) return undefined;
    if (this.early.length < n) return undefined;
    const mean = (xs: Array<[number, number]>, k: 0 | 1): number => xs.reduce((a, b) => a + b[k], 0) / xs.length;
    // Engines that admit everything (vLLM's 256 slots) keep first tokens quick and slow every step instead.
    const [ttft0, ttft1, e2e0, e2e1] = [mean(this.early, 0), mean(this.recent, 0), mean(this.early, 1), mean(this.recent, 1)];
    const ttftRose = ttft1 >= SATURATION_SIGNS.latencyRise * ttft0;
    if (!ttftRose && !(e2e1 >= SATURATION_SIGNS.latencyRise * e2e0)) return undefined;
    const rise = ttftRose || Number.isNaN(e2e0) ? `time to first token ${ttft0.toFixed(0)} → ${ttft1.toFixed(0)} ms` : `latency ${(e2e0 / 1000).toFixed(2)} → ${(e2e1 / 1000).toFixed(2)} s`;
    return { sends, completions, inFlight, rise };
  }
}

/**
 * The open loop's in-flight limit (SaturationRule.maxInFlight): once this many requests are in flight at once,
 * completions or not, the row is over-saturated. Returns the reason, or undefined below the limit.
 */
export function inFlightLimitReason(limit: number, counts: { sent: number; completed: number }, elapsedMs: number): string | undefined {
  const inFlight = counts.sent - counts.completed;
  if (inFlight < limit) return undefined;
  return (
    `over-saturated: ${inFlight} requests in flight, the most an open loop holds (past it they would wait in the client), ` +
    `${counts.completed} completions for ${counts.sent} sends in ${(elapsedMs / 1000).toFixed(1)} s`
  );
}
