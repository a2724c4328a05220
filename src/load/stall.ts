import { type Clock, type Timer, realClock } from '../core/clock.js';

/**
 * A server that accepts requests and never answers (issue 36): without this a row keeps sending, and piling up open
 * requests, until each request's own first-byte timeout (minutes). The watch calls `onStall` once requests have been
 * open and the server has sent nothing for `stallMs`: no request completed (successfully or not) and no reply bytes
 * arrived — counted from the later of the last completion or reply and the moment requests were open again after
 * none were. Streamed bytes count: a burst whose first completion comes after the whole batch has been prefilled and
 * decoded (300 prompts on vLLM 0.2: ~31 s of streaming before the first request ends) is a busy server, not a silent one.
 */
export class StallWatch {
  private open = 0;
  private busySince: number;
  /** The last completion, or the last reply bytes of a request still open (onReply). */
  private lastReplyAt: number;
  private timer: Timer | undefined;

  constructor(
    private readonly stallMs: number,
    startedAtMs: number,
    private readonly onStall: (openRequests: number, now: number) => void,
    private readonly clock: Clock = realClock,
  ) {
    this.busySince = startedAtMs;
    this.lastReplyAt = startedAtMs;
    // A quarter of the limit (at most a second) between looks: the stop comes within 25% of the limit.
    const every = Math.min(1000, stallMs / 4);
    const look = (): void => {
      const now = clock.now();
      if (this.open > 0 && now - Math.max(this.lastReplyAt, this.busySince) >= this.stallMs) {
        this.onStall(this.open, now);
        return;
      }
      this.timer = clock.setTimer(now + every, look);
    };
    this.timer = clock.setTimer(clock.now() + every, look);
  }

  onSend(): void {
    if (this.open++ === 0) this.busySince = this.clock.now();
  }

  /** A request finished (ok, failed or cut). */
  onDone(): void {
    this.open--;
    this.lastReplyAt = this.clock.now();
  }

  /** An open request received its response head or body bytes: the server is answering. */
  onReply(): void {
    this.lastReplyAt = this.clock.now();
  }

  stop(): void {
    this.timer?.cancel();
  }
}

/** The line a row stops with, kept as its `stoppedEarly`. */
export function stallReason(stallMs: number, openRequests: number): string {
  return `no reply from the server in ${+(stallMs / 1000).toFixed(1)} s (${openRequests} requests open): stopped`;
}
