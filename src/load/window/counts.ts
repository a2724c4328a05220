/**
 * The counts every rule of the steady window reads: requests sent and finished, the measured requests still open
 * (the cool-down lasts until there are none), when completions happened, and the requests in flight over the
 * window (time-weighted, and the most at once) for a throughput row's capSearch.measuredInFlight.
 */
export class WindowCounts {
  sent = 0;
  completed = 0;
  /** Measured requests sent and not finished yet. */
  measuredOpen = 0;
  firstCompletionAt: number | null = null;
  lastCompletionAt = 0;
  /** Σ requests in flight × ms since the window opened; null `trackedAt`: the window is not open. */
  private inFlightArea = 0;
  private trackedAt: number | null = null;
  private mostInFlight = 0;

  get inFlight(): number {
    return this.sent - this.completed;
  }

  /** A send at `now`; `measured`: what the window said about it. */
  onSend(now: number, measured: boolean): void {
    this.accumulate(now);
    this.sent++;
    this.noteMost();
    if (measured) this.measuredOpen++;
  }

  /** A completion at `endAtMs` (ok or failed); `measured`: the request was sent measured (its record has no `warmup`). */
  onComplete(endAtMs: number, measured: boolean): void {
    this.accumulate(endAtMs);
    this.completed++;
    this.firstCompletionAt ??= endAtMs;
    this.lastCompletionAt = Math.max(this.lastCompletionAt, endAtMs);
    if (measured && this.measuredOpen > 0) this.measuredOpen--;
  }

  /** The window opened: the in-flight area is accumulated from here. */
  windowOpened(now: number): void {
    this.trackedAt = now;
    this.noteMost();
  }

  /** The window closed (or the row stopped): accumulate up to `now`, then stop. */
  windowClosed(now: number): void {
    this.accumulate(now);
    this.trackedAt = null;
  }

  /** Time-weighted mean and most requests in flight between the window's open and close (undefined: no length). */
  measuredInFlight(openAt: number | null, closeAt: number): { mean: number; max: number } | undefined {
    return openAt !== null && closeAt > openAt ? { mean: this.inFlightArea / (closeAt - openAt), max: this.mostInFlight } : undefined;
  }

  /** Call before the count changes. */
  private accumulate(now: number): void {
    if (this.trackedAt === null) return;
    this.inFlightArea += this.inFlight * Math.max(0, now - this.trackedAt);
    this.trackedAt = Math.max(this.trackedAt, now);
  }

  private noteMost(): void {
    if (this.trackedAt !== null) this.mostInFlight = Math.max(this.mostInFlight, this.inFlight);
  }
}
