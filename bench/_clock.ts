/**
 * Joining two processes' clocks. performance.now() has a per-process origin; process.hrtime is
 * CLOCK_MONOTONIC, shared by every process on the host. The pair is sampled back to back, best of many
 * (src/distributed/clock-offset.ts, which `run --workers` uses too), to well under 1 µs in each process.
 * performance.timeOrigin is wall-clock based (NTP can slew it between process starts), so it is only
 * reported beside, as a cross-check.
 */
import { performance } from 'node:perf_hooks';
import { measureClockBase } from '../src/distributed/clock-offset.js';

export interface ClockSample {
  /** CLOCK_MONOTONIC ms minus performance.now() ms. */
  offsetMs: number;
  /** Half the bracket of the best sample: the bound on offsetMs's error. */
  errorMs: number;
  timeOrigin: number;
}

export function clockSample(tries = 2000): ClockSample {
  const base = measureClockBase(tries);
  return { offsetMs: base.baseNs / 1e6, errorMs: base.residualNs / 1e6, timeOrigin: performance.timeOrigin };
}
