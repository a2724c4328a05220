/**
 * The energy of one window from power readings (pure functions; sampler.ts collects the readings).
 *
 * Per GPU: the energy counter's increase over the window when the source has one (interpolated linearly at the
 * window's edges; a counter that goes down was reset, and the reading interval across the reset is integrated from
 * the power readings instead, or counted from zero without them), else the trapezoid integral of the power readings
 * clipped to the window (linear between readings, held flat before the first and after the last).
 *
 * Coverage: the share of the window lying between consecutive readings at most MAX_GAP_MS apart, readings just
 * outside the window included. The window's energy is valid only with coverage ≥ MIN_COVERAGE and no gap over
 * MAX_GAP_MS touching it.
 */
import type { PowerSample } from './samples.js';
import { interpolate } from '../core/interpolate.js';

export const MAX_GAP_MS = 1000;
export const MIN_COVERAGE = 0.9;

export interface GpuWindowEnergy {
  joules: number;
  coverage: number;
  /** Longest stretch of the window without a reading (edges included: window start → first reading, last → end). */
  maxGapMs: number;
  /** 'counter' when the energy counter gave it, 'samples' when the power readings were integrated. */
  method: 'counter' | 'samples';
}

/** Coverage and longest gap of readings at `times` (sorted) over [from, to]. */
export function windowCoverage(times: readonly number[], from: number, to: number): { coverage: number; maxGapMs: number } {
  const length = to - from;
  if (!(length > 0)) return { coverage: 0, maxGapMs: 0 };
  // The readings that bound the window: the last one at or before `from`, those inside, the first at or after `to`.
  let first = 0;
  while (first + 1 < times.length && (times[first + 1] as number) <= from) first++;
  let last = times.length - 1;
  while (last - 1 >= 0 && (times[last - 1] as number) >= to) last--;
  const pts = times.slice(first, last + 1);
  if (pts.length === 0) return { coverage: 0, maxGapMs: length };
  let covered = 0;
  let maxGap = 0;
  const p0 = pts[0] as number;
  const pn = pts[pts.length - 1] as number;
  if (p0 > from) maxGap = Math.min(p0, to) - from;
  if (pn < to) maxGap = Math.max(maxGap, to - Math.max(pn, from));
  for (let i = 0; i + 1 < pts.length; i++) {
    const a = pts[i] as number;
    const b = pts[i + 1] as number;
    const inside = Math.min(b, to) - Math.max(a, from);
    if (inside <= 0) continue;
    const gap = b - a;
    if (gap <= MAX_GAP_MS) covered += inside;
    maxGap = Math.max(maxGap, gap);
  }
  return { coverage: Math.min(1, covered / length), maxGapMs: maxGap };
}

/** Value of a piecewise-linear series at `t` (flat outside its readings). */
const valueAt = (ts: readonly number[], vs: readonly number[], t: number): number => interpolate(ts, vs, t);

/** ∫ watts dt over [from, to] in joules: trapezoids between readings, flat beyond the first and last. */
export function integrateWatts(ts: readonly number[], ws: readonly number[], from: number, to: number): number {
  if (ts.length === 0 || !(to > from)) return 0;
  // Breakpoints inside the window plus its edges; between breakpoints the series is linear, so trapezoids are exact.
  const points = [from, ...ts.filter((t) => t > from && t < to), to];
  let joules = 0;
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i] as number;
    const b = points[i + 1] as number;
    joules += ((valueAt(ts, ws, a) + valueAt(ts, ws, b)) / 2) * ((b - a) / 1000);
  }
  return joules;
}

/**
 * The counter made monotone: each reading's energy since the first reading. A drop is a reset: the interval across
 * it is taken from the power readings when both ends have one, else as the counter's value after the reset.
 */
export function unwrapCounter(samples: readonly PowerSample[]): { ts: number[]; es: number[] } {
  const withCounter = samples.filter((s) => s.energyJ !== undefined);
  const ts: number[] = [];
  const es: number[] = [];
  let total = 0;
  for (let i = 0; i < withCounter.length; i++) {
    const s = withCounter[i] as PowerSample;
    const e = s.energyJ as number;
    if (i > 0) {
      const prev = withCounter[i - 1] as PowerSample;
      const pe = prev.energyJ as number;
      if (e >= pe) total += e - pe;
      else if (prev.watts !== undefined && s.watts !== undefined) total += ((prev.watts + s.watts) / 2) * ((s.t - prev.t) / 1000);
      else total += e;
    }
    ts.push(s.t);
    es.push(total);
  }
  return { ts, es };
}

/** The energy of one GPU's readings (sorted by time) over [from, to]. */
export function gpuWindowEnergy(samples: readonly PowerSample[], from: number, to: number): GpuWindowEnergy {
  const counter = unwrapCounter(samples);
  if (counter.ts.length >= 2) {
    const joules = valueAt(counter.ts, counter.es, to) - valueAt(counter.ts, counter.es, from);
    return { joules, method: 'counter', ...windowCoverage(counter.ts, from, to) };
  }
  const withWatts = samples.filter((s) => s.watts !== undefined);
  const ts = withWatts.map((s) => s.t);
  const ws = withWatts.map((s) => s.watts as number);
  return { joules: integrateWatts(ts, ws, from, to), method: 'samples', ...windowCoverage(ts, from, to) };
}
