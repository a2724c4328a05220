import { describe, expect, it } from 'vitest';
import type { StageSummary } from '../../src/metrics/summary.js';
import { calibratedFactors, studentT } from '../../src/sim/calibrate/predict-intervals.js';
import { rowNoise } from '../../src/sim/calibrate/run-intervals.js';

const stats = (mean: number, median: number, stddev: number, count: number) => ({ count, mean, median, p90: median, p95: median, p99: median, min: 0, max: 2 * median, stddev });
const row = { requests: { ok: 25 }, metrics: { ttftMs: stats(110, 100, 40, 25), itlMs: stats(20, 19, 2, 25), e2eMs: stats(800, 790, 80, 25) } } as unknown as StageSummary;

describe('a calibrated interval is never narrower than a new row can be measured', () => {
  it("rowNoise: a median's error is √(π/2)·sd/median/√n, a mean's sd/mean/√n; a closed loop's rates take the mean e2e's", () => {
    expect(rowNoise(row, 'ttft')).toBeCloseTo((1.2533 * 40) / 100 / 5, 10);
    expect(rowNoise(row, 'itl')).toBeCloseTo(2 / 20 / 5, 10);
    expect(rowNoise(row, 'e2e')).toBeCloseTo((1.2533 * 80) / 790 / 5, 10);
    expect(rowNoise(row, 'outputTokenThroughput')).toBeCloseTo(80 / 800 / 5, 10);
    expect(rowNoise(row, 'requestThroughput')).toBeCloseTo(80 / 800 / 5, 10);
    const one = { ...row, metrics: { ...row.metrics, ttftMs: stats(100, 100, Number.NaN, 1) } } as unknown as StageSummary;
    expect(rowNoise(one, 'ttft')).toBeUndefined();
  });

  it('the interval takes noise in place of sd where it is larger, and sd where noise is smaller or absent', () => {
    const t = studentT(0.8, 5);
    const half = (spread: number): number => t * Math.sqrt(spread ** 2 * (1 + 1 / 6) + 0.01 ** 2);
    const tight = calibratedFactors({ ttft: { bias: 0, sd: 0.005, se: 0.01, n: 6, noise: 0.1 } }, 'ttft', 0.8);
    expect(tight?.high).toBeCloseTo(Math.exp(half(0.1)), 10);
    expect(tight?.low).toBeCloseTo(Math.exp(-half(0.1)), 10);
    const wide = calibratedFactors({ ttft: { bias: 0.02, sd: 0.2, se: 0.01, n: 6, noise: 0.1 } }, 'ttft', 0.8);
    expect(wide?.high).toBeCloseTo(Math.exp(-0.02 + half(0.2)), 10);
    // A calibration file written before the floor (no noise) gives the intervals it gave then.
    const old = calibratedFactors({ ttft: { bias: 0, sd: 0.005, se: 0.01, n: 6 } }, 'ttft', 0.8);
    expect(old?.high).toBeCloseTo(Math.exp(half(0.005)), 10);
  });
});
