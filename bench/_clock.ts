/**
 * Joining two processes' clocks. performance.now() has a per-process origin; process.hrtime is
 * CLOCK_MONOTONIC, shared by every process on the host. Sampling both back to back (best of many, by
 * the bracket width) gives offset = monotonic − performance.now() to well under 1 µs in each process.
 * performance.timeOrigin is wall-clock based (NTP can slew it between process starts), so it is only
 * reported beside, as a cross-check.
 */
import { performance } from 'node:perf_hooks';

export interface ClockSample {
  /** CLOCK_MONOTONIC ms minus performance.now() ms. */
  offsetMs: number;
  /** Half the bracket of the best sample: the bound on offsetMs's error. */
  errorMs: number;
  timeOrigin: number;
}

export function clockSample(tries = 2000): ClockSample {
  let best = Infinity;
  let offset = 0;
  for (let i = 0; i < tries; i++) {
    const a = performance.now();
    const m = Number(process.hrtime.bigint()) / 1e6;
    const b = performance.now();
    if (b - a < best) {
      best = b - a;
      offset = m - (a + b) / 2;
    }
  }
  return { offsetMs: offset, errorMs: best / 2, timeOrigin: performance.timeOrigin };
}
