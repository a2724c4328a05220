import type { SimDriver } from './driver.js';
import { EventHeap } from './heap.js';

/** Fast-forward time: events run back to back with no waiting (a 10-minute benchmark in milliseconds). */
export class VirtualDriver implements SimDriver {
  private readonly heap = new EventHeap();
  private t: number;
  private handled = 0;

  constructor(startMs = 0) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  schedule(atMs: number, fn: () => void): void {
    this.heap.push(atMs > this.t ? atMs : this.t, fn);
  }

  get pending(): number {
    return this.heap.size;
  }

  get eventsHandled(): number {
    return this.handled;
  }

  /** Drain events up to `untilMs` (inclusive); returns the number handled. */
  run(untilMs = Infinity): number {
    let n = 0;
    while (this.heap.size > 0 && this.heap.peekTime() <= untilMs) {
      const e = this.heap.pop();
      if (!e) break;
      this.t = e.t;
      e.fn();
      n++;
    }
    if (untilMs !== Infinity && untilMs > this.t) this.t = untilMs;
    this.handled += n;
    return n;
  }

  /** Handle events one at a time while `keepGoing()` holds; returns the number handled. */
  runWhile(keepGoing: () => boolean): number {
    let n = 0;
    while (this.heap.size > 0 && keepGoing()) {
      const e = this.heap.pop();
      if (!e) break;
      this.t = e.t;
      e.fn();
      n++;
    }
    this.handled += n;
    return n;
  }
}
