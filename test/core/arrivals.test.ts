import { describe, expect, it } from 'vitest';
import { createArrivalProcess } from '../../src/load/arrivals.js';
import { computeStats } from '../../src/metrics/stats.js';

const take = (n: number, next: () => number): number[] => Array.from({ length: n }, next);

describe('arrival processes', () => {
  it('constant arrivals are exact absolute offsets', () => {
    const p = createArrivalProcess({ kind: 'constant', rate: 4, seed: 1 });
    expect(take(5, () => p.next())).toEqual([0, 250, 500, 750, 1000]);
  });

  it('poisson and gamma keep the mean rate and are reproducible under a seed', () => {
    for (const kind of ['poisson', 'gamma'] as const) {
      const a = createArrivalProcess({ kind, rate: 100, seed: 7, burstiness: 0.5 });
      const b = createArrivalProcess({ kind, rate: 100, seed: 7, burstiness: 0.5 });
      const ta = take(20_000, () => a.next());
      expect(take(20_000, () => b.next())).toEqual(ta);
      const achieved = (ta.length - 1) / ((ta[ta.length - 1] as number) / 1000);
      expect(achieved).toBeGreaterThan(97);
      expect(achieved).toBeLessThan(103);
    }
  });

  it('gamma burstiness < 1 spreads the gaps more than Poisson', () => {
    const gaps = (burstiness: number): number => {
      const p = createArrivalProcess({ kind: 'gamma', rate: 10, seed: 3, burstiness });
      const t = take(5000, () => p.next());
      const g = t.slice(1).map((v, i) => v - (t[i] as number));
      const s = computeStats(g)!;
      return s.stddev / s.mean;
    };
    expect(gaps(0.25)).toBeGreaterThan(1.5);
    expect(gaps(1)).toBeGreaterThan(0.9);
    expect(gaps(1)).toBeLessThan(1.1);
  });
});

describe('stats', () => {
  it('uses linear interpolation like numpy', () => {
    const s = computeStats([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])!;
    expect(s.median).toBe(5.5);
    expect(s.p90).toBeCloseTo(9.1, 10);
    expect(s.p99).toBeCloseTo(9.91, 10);
    expect(s.min).toBe(1);
    expect(s.max).toBe(10);
    expect(s.mean).toBe(5.5);
  });
});
