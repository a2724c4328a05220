import type { Clock, Timer } from './clock.js';
import { EventHeap } from './event-heap.js';

/**
 * Virtual time: a discrete-event scheduler. Timers wait in a heap, ordered by time and then by when they were set;
 * time jumps to the next timer only after everything deferred (`defer`, the virtual microtasks) has run, so a row of
 * ten minutes runs in milliseconds and always the same way. The load driver and the simulated engine (as its
 * SimDriver: `schedule`) set their timers on the same clock.
 *
 * `run`/`runWhile` drive callback code synchronously (the load driver, the engine). `runAsync` also lets pending
 * promise continuations run before each timer, for code that awaits (a macrotask turn per timer: slower).
 */
export class VirtualClock implements Clock {
  private readonly heap = new EventHeap();
  private deferred: (() => void)[] = [];
  private t: number;
  private handled = 0;

  constructor(startMs = 0) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  setTimer(atMs: number, fn: () => void): Timer {
    let live = true;
    this.heap.push(atMs > this.t ? atMs : this.t, () => {
      if (live) fn();
    });
    return { cancel: () => (live = false) };
  }

  defer(fn: () => void): void {
    this.deferred.push(fn);
  }

  /** The engine's SimDriver: run `fn` at `atMs` (clamped to now); equal times run in the order they were set. */
  schedule(atMs: number, fn: () => void): void {
    this.heap.push(atMs > this.t ? atMs : this.t, fn);
  }

  get pending(): number {
    return this.heap.size + this.deferred.length;
  }

  get eventsHandled(): number {
    return this.handled;
  }

  /** Runs events up to `untilMs` (inclusive), then stands at `untilMs`; returns the number of timers run. */
  run(untilMs = Infinity): number {
    const n = this.runWhile(() => this.heap.peekTime() <= untilMs);
    if (untilMs !== Infinity && untilMs > this.t) this.t = untilMs;
    return n;
  }

  /** Runs events one at a time while `keepGoing()` holds (asked before each timer); returns the number of timers run. */
  runWhile(keepGoing: () => boolean): number {
    let n = 0;
    for (;;) {
      this.runDeferred();
      if (this.heap.size === 0 || !keepGoing()) break;
      this.step();
      n++;
    }
    this.handled += n;
    return n;
  }

  /** As runWhile, and promise continuations pending in this process run before each timer too. */
  async runAsync(keepGoing: () => boolean = () => true): Promise<number> {
    let n = 0;
    for (;;) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      this.runDeferred();
      if (this.deferred.length > 0) continue;
      if (this.heap.size === 0 || !keepGoing()) break;
      this.step();
      n++;
    }
    this.handled += n;
    return n;
  }

  private step(): void {
    const e = this.heap.pop();
    if (!e) return;
    this.t = e.t;
    e.fn();
  }

  private runDeferred(): void {
    // Index loop: a deferred callback may defer more, which run in the same pass.
    for (let i = 0; i < this.deferred.length; i++) (this.deferred[i] as () => void)();
    this.deferred.length = 0;
  }
}
