import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { parseLengthDist, parseScenario, sampleLength } from '../../src/workload/lengths.js';

describe('parseScenario', () => {
  it('reads the genai-bench forms', () => {
    expect(parseScenario('D(100,1000)')).toEqual({ prompt: { kind: 'fixed', value: 100 }, output: { kind: 'fixed', value: 1000 } });
    expect(parseScenario('N(480,240)/(300,150)')).toEqual({
      prompt: { kind: 'normal', mean: 480, stddev: 240 },
      output: { kind: 'normal', mean: 300, stddev: 150 },
    });
    expect(parseScenario(' U(50, 100)/(200,250) ')).toEqual({
      prompt: { kind: 'uniform', min: 50, max: 100 },
      output: { kind: 'uniform', min: 200, max: 250 },
    });
    expect(parseScenario('U(1,512)')).toEqual({ prompt: { kind: 'uniform', min: 1, max: 512 }, output: { kind: 'uniform', min: 1, max: 512 } });
  });

  it('rejects malformed strings in one line naming the accepted forms', () => {
    for (const bad of ['D(100)', 'D(1,2)/(3,4)', 'N(480,240)', 'X(1,2)', 'U(10,5)/(1,2)', 'D(0,5)', 'D(1.5,3)', 'N(a,b)/(1,2)', '']) {
      let message = '';
      try {
        parseScenario(bad);
      } catch (err) {
        message = `${(err as Error).message} ${(err as { hint?: string }).hint}`;
        expect((err as { code?: string }).code).toBe('E_CONFIG');
      }
      expect(message).toContain('D(in,out)');
      expect(message.split('\n')).toHaveLength(1);
    }
  });
});

describe('parseLengthDist', () => {
  it('reads plain numbers and named distributions', () => {
    expect(parseLengthDist('512')).toEqual({ kind: 'fixed', value: 512 });
    expect(parseLengthDist('uniform:128,1024')).toEqual({ kind: 'uniform', min: 128, max: 1024 });
    expect(parseLengthDist('normal:512,64')).toEqual({ kind: 'normal', mean: 512, stddev: 64 });
    expect(parseLengthDist('exp:256')).toEqual({ kind: 'exponential', mean: 256 });
    expect(() => parseLengthDist('normal:512', '--prompt-dist')).toThrow(/--prompt-dist "normal:512": normal takes 2 numbers/);
    expect(() => parseLengthDist('poisson:3')).toThrow();
    expect(() => parseLengthDist('0')).toThrow(/whole numbers/);
  });

  it('samples whole numbers ≥ 1 within bounds, seeded', () => {
    const rng = new Rng(1);
    const normal = Array.from({ length: 5000 }, () => sampleLength({ kind: 'normal', mean: 10, stddev: 30 }, rng));
    expect(Math.min(...normal)).toBe(1);
    expect(normal.every(Number.isInteger)).toBe(true);
    const uniform = Array.from({ length: 5000 }, () => sampleLength({ kind: 'uniform', min: 5, max: 9 }, rng));
    expect(new Set(uniform)).toEqual(new Set([5, 6, 7, 8, 9]));
    const exp = Array.from({ length: 20000 }, () => sampleLength({ kind: 'exponential', mean: 200 }, rng));
    const mean = exp.reduce((a, b) => a + b, 0) / exp.length;
    expect(mean).toBeGreaterThan(190);
    expect(mean).toBeLessThan(210);
    const a = Array.from({ length: 10 }, (_, i) => sampleLength({ kind: 'normal', mean: 100, stddev: 10 }, new Rng(i)));
    const b = Array.from({ length: 10 }, (_, i) => sampleLength({ kind: 'normal', mean: 100, stddev: 10 }, new Rng(i)));
    expect(a).toEqual(b);
  });
});
