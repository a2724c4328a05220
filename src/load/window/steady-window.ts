import type { RequestRecord } from '../../metrics/record.js';
import { InFlightCapSearch } from './cap-search.js';
import { WindowCounts } from './counts.js';
import { FailureStreak } from './failure-streak.js';
import { Ramp } from './ramp.js';
import type { WindowOutcome, WindowRules } from './rules.js';
import { inFlightLimitReason, SaturationStop } from './saturation-stop.js';
import { WindowLength } from './window-length.js';

type Finished = Pick<RequestRecord, 'sentAtMs' | 'endAtMs' | 'status' | 'error' | 'ttftMs'> & Partial<Pick<RequestRecord, 'firstTokenAtMs' | 'lastTokenAtMs'>> & { warmup?: boolean };

/**
 * The steady window of a row (the rules: ./rules.ts), decided online and the same way in real and virtual time.
 * This class only moves the row through its phases — ramp → window → cool-down → closed — and asks each unit its
 * one question: the ramp whether the window opens, the window's length whether it closes, the cap search what may
 * be in flight, the over-saturation and fast-failure stops whether the row stops at once. Without rules (batch
 * rows) everything is measured and nothing stops the row but the driver.
 */
export class SteadyWindow {
  private phase: 'ramp' | 'window' | 'cooldown' | 'closed';
  /** The row closed the normal way: its window ended and every request measured in it had finished. */
  private measuredAllDone = false;
  private openAt: number | null = null;
  private closeAt: number | null = null;
  private unsettled = false;
  private stopped: string | undefined;
  private overSaturated: string | undefined;
  private readonly counts = new WindowCounts();
  private readonly capSearch: InFlightCapSearch;
  private readonly ramp: Ramp | undefined;
  private readonly length: WindowLength | undefined;
  private readonly failures: FailureStreak | undefined;
  private readonly saturation: SaturationStop | undefined;

  constructor(
    private readonly rules: WindowRules | undefined,
    private readonly startMs: number,
    private readonly fixedCap: number,
  ) {
    this.phase = rules ? 'ramp' : 'window';
    this.capSearch = new InFlightCapSearch(rules?.adaptiveCap, startMs, fixedCap);
    if (rules) {
      this.ramp = new Ramp(rules, startMs, this.capSearch.settled);
      this.length = new WindowLength(rules);
      this.failures = new FailureStreak(rules.fastFailureStreak, rules.fastFailureMs);
      if (rules.saturationStop) this.saturation = new SaturationStop(rules.saturationStop);
    }
  }

  /** Requests may be in flight at once now. */
  inFlightCap(): number {
    return this.capSearch.cap;
  }

  /** Whether a request sent at `now` is measured (false: ramp-up). Call just before sending. */
  onSend(now: number): boolean {
    this.tick(now);
    this.ramp?.onSend(now);
    const measured = this.phase === 'window' || (this.phase === 'ramp' && this.rules?.measureRamp === true);
    this.counts.onSend(now, measured);
    if (measured) this.length?.onMeasuredSend();
    this.checkInFlightLimit(now);
    return measured;
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
  onComplete(record: Finished): void {
    const { sentAtMs, endAtMs } = record;
    this.counts.onComplete(endAtMs, record.warmup !== true);
    if (this.phase === 'cooldown' && this.counts.measuredOpen === 0) this.finishCooldown();
    // The cool-down keeps the load on; it is not where a row is judged over-saturated (its window was).
    if (this.saturation && (this.phase === 'ramp' || this.phase === 'window')) {
      const reason = this.saturation.onComplete(record, this.counts);
      if (reason !== undefined) this.stopOverSaturated(endAtMs, reason);
    }
    if (this.length?.closesAtNextCompletion) this.endWindow(endAtMs);
    this.length?.onComplete(record, this.openAt);
    const streakStop = this.failures?.onComplete(record);
    if (streakStop !== undefined && this.stopped === undefined) {
      this.stopped = streakStop;
      this.close(endAtMs);
    }
    this.capSearch.onComplete(record);
    this.ramp?.onComplete(sentAtMs, endAtMs, this.capSearch.settled);
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
      const measured = this.counts.measuredInFlight(this.openAt, this.closeAt ?? endMs);
      out.capSearch = { cap: this.capSearch.cap, steps: this.capSearch.steps, ...(measured ? { measuredInFlight: measured } : {}) };
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
    this.counts.windowClosed(now);
    // Stopped in the cool-down: the window had closed already.
    if (this.phase !== 'cooldown') this.closeAt = now;
    this.phase = 'closed';
  }

  /** The driver stopped the row for a reason of its own (a server that answers nothing): closed at once, saying why. */
  stop(now: number, reason: string): void {
    this.stopped ??= reason;
    this.close(now);
  }

  /** The open loop's in-flight limit (saturationStop.maxInFlight) reached: this send is the row's last. */
  private checkInFlightLimit(now: number): void {
    const limit = this.rules?.saturationStop?.maxInFlight;
    // A client cap (--max-concurrency) already bounds the requests in flight: the user chose it.
    if (limit === undefined || this.fixedCap !== Infinity || this.phase === 'closed') return;
    const reason = inFlightLimitReason(limit, this.counts, now - this.startMs);
    if (reason !== undefined) this.stopOverSaturated(now, reason);
  }

  private stopOverSaturated(now: number, reason: string): void {
    this.overSaturated = reason;
    this.stopped = `stopped early, ${reason}`;
    this.close(now);
  }

  /** The window has measured enough: it closes, and the load stays on until its measured requests have finished. */
  private endWindow(now: number): void {
    if (this.phase !== 'window') return;
    this.counts.windowClosed(now);
    this.closeAt = now;
    this.length?.closed();
    this.phase = 'cooldown';
    if (this.counts.measuredOpen === 0) this.finishCooldown();
  }

  private finishCooldown(): void {
    this.phase = 'closed';
    this.measuredAllDone = true;
  }

  private open(now: number): void {
    this.phase = 'window';
    this.openAt = now;
    this.counts.windowOpened(now);
  }

  private tick(now: number): void {
    const r = this.rules;
    if (!r || !this.ramp || !this.length || this.phase === 'closed' || this.phase === 'cooldown') return;
    if (this.phase === 'ramp') {
      const step = this.capSearch.step(now, this.counts.inFlight);
      if (step === 'kept') this.ramp.loadInPlace();
      if (step === 'backed-off') this.ramp.hopAgain(now);
      const ramp = this.ramp;
      const end = ramp.endsAt(now, () =>
        this.capSearch.settled ? ramp.limitMs(this.counts.firstCompletionAt, this.capSearch.backOffLimitMs) : this.capSearch.rampLimitMs(r.rampLimitMs, this.counts),
      );
      if (end === 'unsettled') {
        this.unsettled = true;
        this.capSearch.settle();
      }
      if (end !== undefined) this.open(now);
      return;
    }
    if (this.length.closesNow(now, this.openAt as number)) this.endWindow(now);
  }
}
