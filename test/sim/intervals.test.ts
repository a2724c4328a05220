import { describe, expect, it } from 'vitest';
import { buildResidualModel, coverage, intervalFactors, novelDimensions, quantile, type ResidualPoint } from '../../src/sim/calibrate/intervals.js';
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
    const rows = coverage(points(), 0.8);
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
});
