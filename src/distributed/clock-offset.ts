import { performance } from 'node:perf_hooks';

/**
 * Where this thread's (or process's) performance.now() zero lies on CLOCK_MONOTONIC, which every thread and
 * process of one host shares. Whether performance.now() counts from the process's start or each worker thread's own
 * has changed between Node versions (on 20.20 threads share the origin: the offset measures 0.0 µs), and processes
 * never share it; hrtime is shared by all. So the offset is measured, not assumed. The pair is sampled many times and the tightest pair kept: the
 * gap between its two reads bounds the error (`residualNs`).
 */
export interface ClockBase {
  /** CLOCK_MONOTONIC at this thread's performance.now() = 0, in ns (as a number: ~2^53 covers 104 days of uptime). */
  baseNs: number;
  /** Upper bound on the sampling error of baseNs, ns. */
  residualNs: number;
}

export function measureClockBase(samples = 200): ClockBase {
  let best = Infinity;
  let baseNs = 0;
  for (let i = 0; i < samples; i++) {
    const before = process.hrtime.bigint();
    const now = performance.now();
    const after = process.hrtime.bigint();
    const gap = Number(after - before);
    if (gap < best) {
      best = gap;
      // The performance.now() read lies between the two hrtime reads: take the midpoint.
      baseNs = Number(before) + gap / 2 - now * 1e6;
    }
  }
  return { baseNs, residualNs: best / 2 };
}

/** Milliseconds to add to a stamp of the `from` thread to put it on the `to` thread's performance.now() clock. */
export function offsetMs(from: ClockBase, to: ClockBase): number {
  return (from.baseNs - to.baseNs) / 1e6;
}
