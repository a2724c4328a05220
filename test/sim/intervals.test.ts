import { describe, expect, it } from 'vitest';
import { INTERVAL_DATA } from '../../src/sim/calibrate/interval-data.js';
import { calibratedModel, coverage, methodGrid } from '../../src/sim/calibrate/interval-calibration.js';
import {
  buildResidualModel, DIMENSIONS, FAMILIES, intervalFactors, type LoadRegime, novelDimensions, quantile, type ResidualPoint, weightedQuantile,
} from '../../src/sim/calibrate/intervals.js';
import { studentT } from '../../src/sim/calibrate/predict-intervals.js';

/** A seeded uniform generator (mulberry32), and normal draws from it (Box-Muller). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const normal = (u: () => number): number => Math.sqrt(-2 * Math.log(u() + 1e-12)) * Math.cos(2 * Math.PI * u());

/** 12 tables of 40 figures, residuals N(0, σ); table 11 runs on a GPU no other table has, with 3× the spread. */
function points(): ResidualPoint[] {
  const u = rng(7);
  const out: ResidualPoint[] = [];
  for (let t = 0; t < 12; t++) {
    const novel = t === 11;
    for (let i = 0; i < 40; i++) {
      out.push({
        group: `T${t}`, family: 'itl', regime: 'loaded', r: normal(u) * (novel ? 0.45 : 0.15),
        deployment: { gpu: novel ? 'X1' : t % 2 ? 'A100-80GB' : 'H100', engine: 'vllm-v0', family: 'llama', quant: '16-bit' },
      });
    }
  }
  return out;
}

describe('prediction intervals from held-out residuals', () => {
  it('reads empirical quantiles (linear interpolation) and Student-t quantiles', () => {
    expect(quantile([0, 1, 2, 3, 4], 0.5)).toBe(2);
    expect(quantile([0, 1, 2, 3, 4], 0.1)).toBeCloseTo(0.4, 10);
    expect(studentT(0.95, 1)).toBeCloseTo(12.706, 2);
    expect(studentT(0.8, 7)).toBeCloseTo(1.415, 2);
    expect(studentT(0.95, 1000)).toBeCloseTo(1.962, 2);
  });

  it('finds the figures whose GPU no other table covers, and widens the interval of an unseen GPU to theirs', () => {
    const pts = points();
    const nov = novelDimensions(pts);
    expect(pts.filter((p) => (nov.get(p) ?? []).includes('gpu')).map((p) => p.group)).toEqual(Array(40).fill('T11'));
    const model = buildResidualModel(pts);
    expect(model.seen.gpu['X1']).toBe(1);
    expect(model.seen.gpu['H100']).toBe(6);
    const seen = intervalFactors(model, 'itl', 'loaded', 0.8);
    const unseen = intervalFactors(model, 'itl', 'loaded', 0.8, ['gpu']);
    expect(seen && unseen).toBeTruthy();
    // The truth lies around the prediction: low < 1 < high, and the out-of-family interval is the wider one.
    expect(seen?.low).toBeLessThan(1);
    expect(seen?.high).toBeGreaterThan(1);
    expect((unseen?.high ?? 0) / (unseen?.low ?? 1)).toBeGreaterThan(1.5 * ((seen?.high ?? 0) / (seen?.low ?? 1)));
    expect(unseen?.source).toBe('itl|gpu');
    // A wider level gives a wider interval.
    const at95 = intervalFactors(model, 'itl', 'loaded', 0.95);
    expect((at95?.high ?? 0) / (at95?.low ?? 1)).toBeGreaterThan((seen?.high ?? 0) / (seen?.low ?? 1));
  });

  it('checks coverage by leaving each table out of the residuals that build its interval: near 80% at 80%', () => {
    const rows = coverage(points(), 0.8, 'pooled');
    expect(rows).toHaveLength(1);
    const itl = rows[0];
    expect(itl?.family).toBe('itl');
    expect(itl?.n).toBe(480);
    // 440 in-family figures at ~80%, and the novel table's 40 against an interval built without any novel residual
    // (none left once it is out): its figures fall back to in-family intervals 3× too narrow, and miss more.
    expect(itl?.coverage).toBeGreaterThan(70);
    expect(itl?.coverage).toBeLessThan(85);
    expect(itl?.novel?.n).toBe(40);
    expect(itl?.novel?.coverage).toBeLessThan(itl?.coverage ?? 0);
  });

  it('weighs every table alike in a weighted quantile at power 1, every figure alike at power 0', () => {
    // One table of 9 figures at 0 and one of 1 figure at 10: pooled, the median is 0; tables alike, it lies between.
    const groups = [[0, 0, 0, 0, 0, 0, 0, 0, 0], [10]];
    expect(weightedQuantile(groups, 0.5, 0)).toBe(0);
    expect(weightedQuantile(groups, 0.5, 1)).toBeGreaterThan(0);
    expect(weightedQuantile(groups, 0.5, 1)).toBeLessThan(10);
    // Every figure alike: the plain linear-interpolated quantile.
    expect(weightedQuantile([[0, 1], [2, 3, 4]], 0.1, 0)).toBeCloseTo(quantile([0, 1, 2, 3, 4], 0.1), 10);
  });
});

/** Tables whose figures share one error (a table bias, sd τ) beside their own spread (sd σ), of uneven sizes. */
function tablePoints(seed: number, tables: number, tau: number, sigma: number): ResidualPoint[] {
  const u = rng(seed);
  const out: ResidualPoint[] = [];
  for (let t = 0; t < tables; t++) {
    const bias = normal(u) * tau;
    const n = 10 + Math.floor(u() * 60);
    for (let i = 0; i < n; i++) {
      out.push({ group: `T${t}`, family: 'itl', regime: 'loaded', r: bias + normal(u) * sigma, deployment: { gpu: 'H100', engine: 'vllm-v1', family: 'llama', quant: '16-bit' } });
    }
  }
  return out;
}

describe('calibrated intervals (tables weighed alike, widened by leave-one-table-out scores)', () => {
  it('with a table-level error, the pooled quantiles under-cover a table left out; the calibrated ones land near the level', () => {
    const pooled: number[] = [];
    const calibrated: number[] = [];
    for (const seed of [1, 2, 3, 4]) {
      const pts = tablePoints(seed, 16, 0.25, 0.08);
      pooled.push(coverage(pts, 0.8, 'pooled')[0]?.coverage as number);
      calibrated.push(coverage(pts, 0.8, 'calibrated')[0]?.coverage as number);
    }
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean(pooled)).toBeLessThan(77);
    expect(mean(calibrated)).toBeGreaterThan(77);
    expect(mean(calibrated)).toBeLessThan(84);
    expect(mean(calibrated) - mean(pooled)).toBeGreaterThan(3);
  }, 120_000);

  it('methodGrid scores every combination on every residual set and ranks by the worst family\'s distance from the level', () => {
    const sets = [tablePoints(5, 8, 0.25, 0.08), tablePoints(6, 8, 0.25, 0.08)];
    const grid = { weightPower: [0, 1], scorePower: [0.25], familyScores: ['novel' as const], baseLevel: [0.5, 0.8] };
    const seen: number[] = [];
    const ranked = methodGrid(sets, 0.8, grid, (v) => seen.push(v.worst));
    expect(ranked).toHaveLength(4);
    expect(seen).toHaveLength(4);
    for (let i = 1; i < ranked.length; i++) expect(ranked[i]!.worst).toBeGreaterThanOrEqual(ranked[i - 1]!.worst);
    for (const v of ranked) {
      // Each set's coverage is the nested coverage of that method, and the distance its family's gap from 80%.
      const direct = coverage(sets[1]!, 0.8, 'calibrated', v.options)[0]?.coverage as number;
      expect(v.coverage[1]?.['itl']).toBe(direct);
      expect(v.distance[1]).toBeCloseTo(Math.abs(direct - 80), 9);
      expect(v.worst).toBe(Math.max(...v.distance));
    }
  }, 120_000);

  it('a calibrated model scales its base interval by the level\'s quantile of the scores: wider at 95%, narrower at 50%', () => {
    const model = calibratedModel(tablePoints(9, 12, 0.2, 0.1));
    expect(model.scores?.['all']?.flat().length).toBeGreaterThan(100);
    const at = (l: number): number => {
      const f = intervalFactors(model, 'itl', 'loaded', l);
      return (f?.high ?? 0) / (f?.low ?? 1);
    };
    expect(at(0.5)).toBeLessThan(at(0.8));
    expect(at(0.8)).toBeLessThan(at(0.95));
  }, 60_000);

  it('the shipped interval data: nested leave-one-table-out coverage of the 80% intervals within 75–85% for every family it can judge', () => {
    const rows = INTERVAL_DATA.coverage80;
    for (const f of ['ttft-low', 'ttft', 'itl', 'out-sat', 'out', 'reqs'] as const) {
      const row = rows.find((r) => r.family === f);
      expect(row, f).toBeDefined();
      expect(row?.tables, f).toBeGreaterThanOrEqual(3);
      expect(row?.coverage, `${f} coverage ${row?.coverage}`).toBeGreaterThanOrEqual(75);
      expect(row?.coverage, `${f} coverage ${row?.coverage}`).toBeLessThanOrEqual(85);
    }
    // The figures before calibration are kept beside them, over the same figures.
    expect(INTERVAL_DATA.coverage80Pooled.map((r) => r.family)).toEqual(rows.map((r) => r.family));
    expect(INTERVAL_DATA.model.scores?.['novel']?.length).toBeGreaterThan(0);
  });

  it('the shipped intervals widen for a GPU, engine, model family or quantization no published table covers', () => {
    const regimes: Record<(typeof FAMILIES)[number], LoadRegime> = { 'ttft-low': 'low', ttft: 'loaded', itl: 'loaded', 'out-sat': 'saturated', out: 'loaded', reqs: 'saturated', e2e: 'low' };
    const width = (f: { low: number; high: number } | undefined): number => (f ? f.high / f.low : Number.NaN);
    for (const fam of FAMILIES) {
      const seen = intervalFactors(INTERVAL_DATA.model, fam, regimes[fam], 0.8);
      expect(seen, fam).toBeDefined();
      let wider = 0;
      for (const d of DIMENSIONS) {
        const unseen = intervalFactors(INTERVAL_DATA.model, fam, regimes[fam], 0.8, [d]);
        expect(width(unseen), `${fam} ${d}`).toBeGreaterThanOrEqual(width(seen));
        if (width(unseen) > width(seen) * 1.001) wider++;
      }
      expect(wider, fam).toBeGreaterThan(0);
    }
  });
});
