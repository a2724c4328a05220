import { MAX_WINDOW_MS, SAMPLE_WINDOW_MARGIN, type WindowRules } from './rules.js';

/**
 * When an open window has measured enough. Count-limited rows: once `--max-requests` requests were sent in it.
 * Time-limited rows: `--max-seconds`, kept open — up to `extendFactor` × that, or (sweep rows, `sampleWindowMaxMs`)
 * as long as `minSamples` take at the rate it sends — until at least `minSamples` requests were sent in it and it is
 * at least as long as the mean latency of its own requests; it then closes on the next completion, so that (opening
 * on one too) it spans whole intervals between completions.
 */
export class WindowLength {
  /** Measured sends (a closed loop's ramp sends count: they ran under the promised load). */
  private sent = 0;
  /** Σ and count of the latencies of successes sent inside the window: a window is at least one of them long. */
  private latencySum = 0;
  private latencyCount = 0;
  private atNextCompletion = false;

  constructor(private readonly rules: Pick<WindowRules, 'measureMs' | 'measureRequests' | 'minSamples' | 'extendFactor' | 'sampleWindowMaxMs'>) {}

  onMeasuredSend(): void {
    this.sent++;
  }

  /** A finished request; `openAt`: when the window opened (null: not yet). */
  onComplete(record: { sentAtMs: number; endAtMs: number; status: string }, openAt: number | null): void {
    // Strictly after the open: in virtual time the ramp's last sends share the window's opening instant.
    if (record.status === 'ok' && openAt !== null && record.sentAtMs > openAt) {
      this.latencySum += record.endAtMs - record.sentAtMs;
      this.latencyCount++;
    }
  }

  /** The window has measured enough and closes at the next completion. */
  get closesAtNextCompletion(): boolean {
    return this.atNextCompletion;
  }

  /** The window closed. */
  closed(): void {
    this.atNextCompletion = false;
  }

  /** Whether the window, open since `openAt`, closes at `now` (true), or at the next completion (closesAtNextCompletion). */
  closesNow(now: number, openAt: number): boolean {
    const r = this.rules;
    if (r.measureRequests !== undefined && this.sent >= r.measureRequests) return true;
    if (r.measureMs === undefined) return false;
    const elapsed = now - openAt;
    // Enough samples, and at least as long as its own requests take (so its latencies are not mostly drain).
    const meanLatency = this.latencyCount > 0 ? this.latencySum / this.latencyCount : Infinity;
    const enough = this.sent >= r.minSamples && elapsed >= meanLatency;
    // The extension stops at its limit (extensionLimitMs) once a request sent in the window has completed; a
    // window none of whose requests has finished has measured nothing yet (requests slower than the window,
    // as at a throughput row's cap on a slow server), so it waits for one, up to MAX_WINDOW_MS.
    const extended = elapsed >= this.extensionLimitMs(r.measureMs, elapsed) && this.latencyCount > 0;
    // A window that opened on a completion and closes on one holds whole intervals between completions: its
    // count / length is the rate without a fraction of an interval lost or gained at either end.
    if (elapsed >= MAX_WINDOW_MS) return true;
    if ((elapsed >= r.measureMs && enough) || extended) this.atNextCompletion = true;
    return false;
  }

  /**
   * How long the window may be kept open for minSamples: extendFactor × --max-seconds; a sized window (sweep rows)
   * as long as minSamples take at the rate it has sent so far, with a margin, up to sampleWindowMaxMs. A row that
   * could not gather them even then (a server far too slow for the limit) keeps the unsized limit: waiting longer
   * would not make it describe its load, and its note says what would.
   */
  private extensionLimitMs(measureMs: number, elapsed: number): number {
    const r = this.rules;
    const base = measureMs * r.extendFactor;
    if (r.sampleWindowMaxMs === undefined || this.sent === 0 || elapsed <= 0) return base;
    const needMs = (r.minSamples * elapsed) / this.sent;
    if (needMs > r.sampleWindowMaxMs) return base;
    return Math.max(base, Math.min(r.sampleWindowMaxMs, SAMPLE_WINDOW_MARGIN * needMs));
  }
}
