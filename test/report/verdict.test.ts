import { describe, expect, it } from 'vitest';
import type { StageSummary } from '../../src/metrics/summary.js';
import { costPerMillion, interpolateAt, meetsSlo } from '../../src/report/verdict.js';

const stage = (p99: { ttftMs?: number; itlMs?: number }, errors = 0): StageSummary =>
  ({
    requests: { total: 10, ok: 10 - errors, errors, incomplete: 0, warmup: 0 },
    metrics: Object.fromEntries(Object.entries(p99).map(([k, v]) => [k, { count: 10, mean: v, median: v, p90: v, p95: v, p99: v, min: v, max: v, stddev: 0 }])),
  }) as unknown as StageSummary;

describe('verdict arithmetic', () => {
  it('interpolates linearly between the rows around x, whatever order the rows come in', () => {
    const pts = [
      { x: 3, y: 300 },
      { x: 1, y: 100 },
      { x: 2, y: 120 },
    ];
    expect(interpolateAt(pts, 1.5)).toBeCloseTo(110);
    expect(interpolateAt(pts, 2.5)).toBeCloseTo(210);
    expect(interpolateAt(pts, 1)).toBe(100);
    expect(interpolateAt(pts, 3)).toBe(300);
    expect(interpolateAt(pts, 0.5)).toBeUndefined();
    expect(interpolateAt(pts, 3.1)).toBeUndefined();
  });

  it('prices 1M output tokens from the GPU-hour price and the GPU count', () => {
    // 8 GPUs at $2/h = $16/h; 1000 tok/s = 3.6M tok/h → $4.444 per 1M
    expect(costPerMillion(2, 8, 1000)).toBeCloseTo(16 / 3.6);
    expect(costPerMillion(2, 1, 0)).toBeUndefined();
  });

  it('a row meets the SLO only when every given p99 is within its limit and nothing failed', () => {
    expect(meetsSlo(stage({ ttftMs: 400, itlMs: 40 }), { ttftMs: 500, itlMs: 50 })).toBe(true);
    expect(meetsSlo(stage({ ttftMs: 600, itlMs: 40 }), { ttftMs: 500, itlMs: 50 })).toBe(false);
    expect(meetsSlo(stage({ ttftMs: 400 }), { itlMs: 50 })).toBe(false);
    expect(meetsSlo(stage({ ttftMs: 400, itlMs: 40 }, 1), { ttftMs: 500 })).toBe(false);
  });
});
