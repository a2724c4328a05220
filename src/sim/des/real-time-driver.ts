import { performance } from 'node:perf_hooks';
import { sleepUntil } from '../../core/clock.js';
import type { SimDriver } from './driver.js';
import { EventHeap } from './heap.js';

export interface RealTimeDriverOptions {
  /** Virtual ms per wall ms (1 = faithful emulation, 10 = accelerated real time). */
  speed?: number;
  /** Length of the precise (setImmediate) wait before each deadline. */
  spinMs?: number;
  /** Called when an event handler throws (default: process warning). */
  onError?: (err: unknown) => void;
}

export interface PacingStats {
  events: number;
  /** Lateness = wall time an event ran − its wall deadline, in wall ms. */
  lateMeanMs: number;
  lateP50Ms: number;
  lateP99Ms: number;
  lateMaxMs: number;
  errors: number;
}

const RING = 8192;

/**
 * Paces events against performance.now(): coarse timer plus a short precise wait, then runs every due
 * event. Virtual time equals performance.now() at speed 1 (same epoch as in-process clients) and never
 * runs ahead of wall time; an event scheduled earlier than the current sleep target "pokes" the loop.
 */
export class RealTimeDriver implements SimDriver {
  readonly speed: number;
  private readonly spinMs: number;
  private readonly onError: (err: unknown) => void;
  private readonly heap = new EventHeap();
  private readonly wall0: number;
  private current: number | undefined;
  private last: number;
  private looping = false;
  private closed = false;
  private sleeper: AbortController | undefined;
  private sleepTarget = Infinity;
  private readonly late = new Float64Array(RING);
  private events = 0;
  private lateSum = 0;
  private lateMax = 0;
  private errors = 0;

  constructor(opts: RealTimeDriverOptions = {}) {
    this.speed = opts.speed ?? 1;
    if (!(this.speed > 0)) throw new RangeError(`speed must be > 0, got ${this.speed}`);
    this.spinMs = opts.spinMs ?? 1.5;
    this.onError = opts.onError ?? ((err) => process.emitWarning(`sim event failed: ${String(err)}`));
    this.wall0 = performance.now();
    this.last = this.wall0;
  }

  /** Wall deadline (performance.now() scale) of a virtual time. */
  toWallMs(virtualMs: number): number {
    return this.wall0 + (virtualMs - this.wall0) / this.speed;
  }

  toVirtualMs(wallMs: number): number {
    return this.wall0 + (wallMs - this.wall0) * this.speed;
  }

  now(): number {
    if (this.current !== undefined) return this.current;
    const v = this.toVirtualMs(performance.now());
    return v > this.last ? v : this.last;
  }

  schedule(atMs: number, fn: () => void): void {
    if (this.closed) return;
    const now = this.now();
    const t = atMs > now ? atMs : now;
    this.heap.push(t, fn);
    if (!this.looping) {
      this.looping = true;
      void this.loop();
    } else if (this.sleeper && this.toWallMs(t) < this.sleepTarget) {
      this.sleeper.abort();
    }
  }

  get pending(): number {
    return this.heap.size;
  }

  /** Stop pacing and drop pending events. */
  close(): void {
    this.closed = true;
    this.heap.clear();
    this.sleeper?.abort();
  }

  pacing(): PacingStats {
    const n = Math.min(this.events, RING);
    const sorted = Array.from(this.late.subarray(0, n)).sort((a, b) => a - b);
    const q = (p: number): number => (n ? (sorted[Math.min(n - 1, Math.floor(p * n))] ?? 0) : 0);
    return {
      events: this.events,
      lateMeanMs: this.events ? this.lateSum / this.events : 0,
      lateP50Ms: q(0.5),
      lateP99Ms: q(0.99),
      lateMaxMs: this.lateMax,
      errors: this.errors,
    };
  }

  private async loop(): Promise<void> {
    let burst = 0;
    while (!this.closed && this.heap.size > 0) {
      const deadline = this.toWallMs(this.heap.peekTime());
      if (performance.now() < deadline) {
        burst = 0;
        this.sleeper = new AbortController();
        this.sleepTarget = deadline;
        await sleepUntil(deadline, this.sleeper.signal, this.spinMs);
        this.sleeper = undefined;
        this.sleepTarget = Infinity;
        continue;
      }
      const e = this.heap.pop();
      if (!e) break;
      const lateness = performance.now() - deadline;
      this.late[this.events % RING] = lateness;
      this.events++;
      this.lateSum += lateness;
      if (lateness > this.lateMax) this.lateMax = lateness;
      this.current = e.t;
      if (e.t > this.last) this.last = e.t;
      try {
        e.fn();
      } catch (err) {
        this.errors++;
        this.onError(err);
      } finally {
        this.current = undefined;
      }
      // Give sockets a turn during long runs of due events.
      if (++burst >= 256) {
        burst = 0;
        await new Promise<void>((r) => setImmediate(r));
      }
    }
    this.looping = false;
  }
}
