import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { classify, decideRow, needsText } from '../../src/gate/decide.js';
import type { RowSide, Unit } from '../../src/gate/samples.js';
import { DEFAULT_MAX_REGRESSION, parseMaxRegression, parseMetricName, thresholdsOrThrow } from '../../src/gate/thresholds.js';

/** A run of a closed-loop row: n requests with latencies around `level` (seeded spread), throughput `rps`. */
function unit(seed: number, n: number, level: number, rps: number): Unit {
  const rng = new Rng(seed);
  const col = (scale: number): Float64Array => Float64Array.from({ length: n }, () => scale * level * (0.8 + 0.4 * rng.next()));
  return { run: `r${seed}`, ok: new Uint8Array(n).fill(1), ttft: col(40), itl: col(10), e2e: col(400), outputTokens: new Float64Array(n).fill(32), rps, outputTps: rps * 32 };
}
const row = (units: Unit[]): RowSide => ({ key: 'closed c=8', label: 'concurrent@8', closed: true, units });

describe('--max-regression', () => {
  it('starts from the defaults, overrides and adds items, and drops one with =off', () => {
    const p: string[] = [];
    const t = parseMaxRegression('ttft.p99=+20%,itl.p50=+3%,rps=off,errors=+2', p);
    expect(p).toEqual([]);
    const byId = Object.fromEntries(t.map((x) => [x.metric.id, x.limit]));
    expect(byId).toEqual({ 'ttft.p50': 0.1, 'itl.p50': 0.03, output_tps: 0.05, capacity: 0.05, errors: 0.02, 'ttft.p99': 0.2 });
    expect(thresholdsOrThrow(undefined).map((x) => x.metric.id).join(',')).toBe(DEFAULT_MAX_REGRESSION.split(',').map((s) => s.split('=')[0]).join(','));
  });

  it('refuses a regression in the wrong direction, unknown metrics and malformed items, each in one problem', () => {
    const p: string[] = [];
    parseMaxRegression('ttft.p50=-10%,output_tps=+5%,speed=+1%,itl', p);
    expect(p).toHaveLength(4);
    expect(p[0]).toMatch(/ttft\.p50.*a rise/);
    expect(p[1]).toMatch(/output_tps.*a drop/);
    expect(p[2]).toMatch(/unknown metric "speed"/);
    expect(p[3]).toMatch(/not METRIC=±N%/);
    expect(parseMetricName('ttft.median')).toMatchObject({ id: 'ttft.p50' });
  });
});

describe('the decision', () => {
  it('classifies an interval against the limit in the bad direction; an interval past the mirrored limit is an improvement', () => {
    const lat = { kind: 'latency', id: 'itl.p50', latency: 'itl', stat: 'p50' } as const;
    const tps = { kind: 'throughput', id: 'output_tps' } as const;
    expect(classify(lat, 0.2, 0.18, 0.22, 0.05).verdict).toBe('fail');
    expect(classify(lat, 0.01, -0.01, 0.03, 0.05)).toMatchObject({ verdict: 'pass', improved: false });
    expect(classify(lat, 0.05, 0.03, 0.07, 0.05).verdict).toBe('inconclusive');
    expect(classify(lat, -0.2, -0.22, -0.18, 0.05)).toMatchObject({ verdict: 'pass', improved: true });
    expect(classify(tps, -0.2, -0.22, -0.18, 0.05).verdict).toBe('fail');
    expect(classify(tps, 0.2, 0.18, 0.22, 0.05)).toMatchObject({ verdict: 'pass', improved: true });
  });

  it('the "needs" estimate scales the interval as 1/√n: half the half-width takes 4× the requests', () => {
    // change +6% with interval [+2%, +10%] against +5%: the low side (4 points) must shrink under 1 point: ×16.
    expect(needsText({ bad: 0.06, badLow: 0.02, badHigh: 0.1, limit: 0.05 }, { requests: 100, baselineRuns: 1, candidateRuns: 1 })).toMatch(/^about 1600 measured requests per side \(now 100; ×16\.0/);
    expect(needsText({ bad: 0.03, badLow: 0.0, badHigh: 0.06, limit: 0.05 }, { requests: 100, baselineRuns: 3, candidateRuns: 3 })).toBe('about 7 runs per side (now 3) would decide it');
  });

  it('is seeded: the same evidence and seed give the same interval', () => {
    const t = thresholdsOrThrow('itl.p90=+5%');
    const a = decideRow(row([unit(1, 300, 1, 20)]), row([unit(2, 300, 1.02, 19.8)]), t, 7).checks;
    const b = decideRow(row([unit(1, 300, 1, 20)]), row([unit(2, 300, 1.02, 19.8)]), t, 7).checks;
    expect(a).toEqual(b);
    expect(a.map((c) => c.metric)).toEqual(['ttft.p50', 'itl.p50', 'output_tps', 'rps', 'errors', 'itl.p90']);
  });

  it('with repeats, run-to-run spread widens the interval (hierarchical bootstrap)', () => {
    const t = thresholdsOrThrow(undefined);
    // Three runs a side whose levels differ by ±8% run to run: the within-run spread alone would be far narrower.
    const base = row([unit(1, 200, 0.92, 20), unit(2, 200, 1.0, 20), unit(3, 200, 1.08, 20)]);
    const cand = row([unit(4, 200, 0.92, 20), unit(5, 200, 1.0, 20), unit(6, 200, 1.08, 20)]);
    // The same three-and-three runs without run-to-run spread (one run a side would carry the assumed prior instead).
    const same = (from: number): RowSide => row([unit(from, 200, 1.0, 20), unit(from + 1, 200, 1.0, 20), unit(from + 2, 200, 1.0, 20)]);
    const width = (c: { low: number; high: number }): number => c.high - c.low;
    const hier = decideRow(base, cand, t, 3).checks.find((c) => c.metric === 'itl.p50');
    const flat = decideRow(same(7), same(10), t, 3).checks.find((c) => c.metric === 'itl.p50');
    expect(width(hier as { low: number; high: number })).toBeGreaterThan(2 * width(flat as { low: number; high: number }));
    expect(hier?.evidence).toBe('600 vs 600 requests, 3 vs 3 runs');
  });
});
