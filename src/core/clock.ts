import { performance } from 'node:perf_hooks';

/** A timer set on a clock; cancelling one that already ran does nothing. */
export interface Timer {
  cancel(): void;
}

/**
 * A monotonic millisecond clock, and what a load driver needs from time: timers and a way to run something once
 * the current step is over. Real runs use `realClock` (performance.now, setTimeout); predictions use a
 * VirtualClock (virtual-clock.ts), a discrete-event scheduler on which the simulated engine runs too.
 */
export interface Clock {
  now(): number;
  /**
   * Runs `fn` at `atMs` (at once if that is past). `precise`: the real clock spins the last ms instead of trusting
   * setTimeout's ±1–4 ms (an open loop's send times); a virtual clock is always exact.
   */
  setTimer(atMs: number, fn: () => void, opts?: { precise?: boolean }): Timer;
  /** Runs `fn` after the code running now, before time moves on (the real clock: a microtask). */
  defer(fn: () => void): void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  setTimer(atMs, fn, opts) {
    if (opts?.precise) {
      const stop = new AbortController();
      void sleepUntil(atMs, stop.signal).then(() => {
        if (!stop.signal.aborted) fn();
      });
      return { cancel: () => stop.abort() };
    }
    const t = setTimeout(fn, Math.max(0, atMs - performance.now()));
    return { cancel: () => clearTimeout(t) };
  },
  defer: (fn) => queueMicrotask(fn),
};

/** Resolves at `atMs` on `clock`, or at once when `signal` aborts. */
export function sleepOn(clock: Clock, atMs: number, signal?: AbortSignal): Promise<void> {
  if (clock === realClock) return sleepUntil(atMs, signal);
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = clock.setTimer(atMs, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    const onAbort = (): void => {
      timer.cancel();
      resolve();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Coarse setTimeout then a short precise wait: setTimeout alone is ±1–4 ms late under load. */
export function sleepUntil(deadlineMs: number, signal?: AbortSignal, spinMs = 1.5): Promise<void> {
  return new Promise((resolve) => {
    let coarseTimer: NodeJS.Timeout | undefined;
    // An abort also clears the coarse timer: left armed, it would keep the process alive until the deadline (a
    // Ctrl-C during a 0.01 req/s row waited 100 s to exit).
    const onAbort = (): void => {
      clearTimeout(coarseTimer);
      resolve();
    };
    if (signal?.aborted) return resolve();
    signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (): void => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    };
    const spin = (): void => {
      if (signal?.aborted) return finish();
      if (performance.now() >= deadlineMs) return finish();
      setImmediate(spin);
    };
    const coarse = deadlineMs - performance.now() - spinMs;
    if (coarse > 0) coarseTimer = setTimeout(spin, coarse);
    else spin();
  });
}
