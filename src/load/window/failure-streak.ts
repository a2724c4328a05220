import { errorText, type RequestRecord } from '../../metrics/record.js';

/**
 * The fast-failure stop: a server that refuses everything (each failure within `fastMs` of its send) stops the row
 * after `limit` failures in a row, rather than filling a whole row with refusals. A success, or a failure that took
 * longer (a real attempt), ends the streak.
 */
export class FailureStreak {
  private length = 0;
  /** Failures of the current streak sent in the ramp-up (left out of the row's figures). */
  private inRamp = 0;
  private lastError = '';

  constructor(
    private readonly limit: number,
    private readonly fastMs: number,
  ) {}

  /** A finished request; returns why the row stops when this failure completes a streak of `limit`. */
  onComplete(record: Pick<RequestRecord, 'sentAtMs' | 'endAtMs' | 'status' | 'error'> & { warmup?: boolean }): string | undefined {
    if (record.status === 'ok' || record.endAtMs - record.sentAtMs >= this.fastMs) {
      this.length = 0;
      this.inRamp = 0;
      return undefined;
    }
    this.length++;
    if (record.warmup === true) this.inRamp++;
    this.lastError = errorText(record) ?? 'failed';
    if (this.length < this.limit) return undefined;
    // The table counts measured requests only: say how many of the streak it shows, so the counts agree.
    const split = this.inRamp > 0 ? ` (${this.length - this.inRamp} measured, ${this.inRamp} in the ramp-up)` : '';
    return `stopped after ${this.length} failures in a row${split}, each within ${this.fastMs} ms (${this.lastError})`;
  }
}
