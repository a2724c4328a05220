import { configError } from '../core/errors.js';
import type { Rng } from '../core/rng.js';
import type { LengthDist } from '../results/run-summary.js';

export type { LengthDist } from '../results/run-summary.js';

export function sampleLength(dist: LengthDist, rng: Rng): number {
  switch (dist.kind) {
    case 'fixed':
      return dist.value;
    case 'uniform':
      return rng.int(dist.min, dist.max);
    case 'normal':
      return clip(Math.round(rng.normal(dist.mean, dist.stddev)), dist.min, dist.max);
    case 'exponential':
      return clip(Math.round(rng.exponential(dist.mean)), dist.min, dist.max);
  }
}

function clip(n: number, min = 1, max = Number.POSITIVE_INFINITY): number {
  return Math.min(Math.max(n, Math.max(1, min)), max);
}

/** A length with its noun, singular for exactly one ("1 token", "128 tokens", "normal(256, 64) tokens"). */
export function lengthOf(dist: LengthDist, noun: string): string {
  return `${describeLength(dist)} ${dist.kind === 'fixed' && dist.value === 1 ? noun : `${noun}s`}`;
}

export function describeLength(dist: LengthDist): string {
  switch (dist.kind) {
    case 'fixed':
      return `${dist.value}`;
    case 'uniform':
      return `uniform ${dist.min}–${dist.max}`;
    case 'normal':
      return `normal(${dist.mean}, ${dist.stddev})`;
    case 'exponential':
      return `exponential(mean ${dist.mean})`;
  }
}

/** The largest length a distribution can produce (Infinity for unbounded tails). */
export function maxLength(dist: LengthDist): number {
  if (dist.kind === 'fixed') return dist.value;
  if (dist.kind === 'uniform') return dist.max;
  return dist.max ?? Number.POSITIVE_INFINITY;
}

const DIST_FORMS = 'N, fixed:N, uniform:MIN,MAX, normal:MEAN,STDDEV, exponential:MEAN';

/** `--prompt-dist`/`--output-dist` values: `512`, `fixed:512`, `uniform:128,1024`, `normal:512,64`, `exponential:256`. */
export function parseLengthDist(text: string, flag = 'length'): LengthDist {
  const s = text.trim();
  const bad = (why: string) => configError(`${flag} ${JSON.stringify(text)}: ${why}`, `accepted forms: ${DIST_FORMS}`);
  const m = /^(?:(fixed|uniform|normal|exponential|exp):)?([^:]+)$/i.exec(s);
  if (!m) throw bad('not a length distribution');
  const kind = (m[1] ?? 'fixed').toLowerCase();
  const nums = (m[2] as string).split(',').map((x) => Number(x.trim()));
  if (nums.some((n) => !Number.isFinite(n))) throw bad('expected numbers');
  const [a, b] = nums as [number, number | undefined];
  const arity = kind === 'uniform' || kind === 'normal' ? 2 : 1;
  if (nums.length !== arity) throw bad(`${kind} takes ${arity} number${arity > 1 ? 's' : ''}`);
  if (kind === 'fixed') return checked({ kind: 'fixed', value: a }, bad);
  if (kind === 'uniform') return checked({ kind: 'uniform', min: a, max: b as number }, bad);
  if (kind === 'normal') return checked({ kind: 'normal', mean: a, stddev: b as number }, bad);
  return checked({ kind: 'exponential', mean: a }, bad);
}

function checked<T extends LengthDist>(d: T, bad: (why: string) => Error): T {
  const ints = (...xs: number[]) => xs.every((x) => Number.isInteger(x) && x >= 1);
  if (d.kind === 'fixed' && !ints(d.value)) throw bad('lengths are whole numbers ≥ 1');
  if (d.kind === 'uniform' && (!ints(d.min, d.max) || d.min > d.max)) throw bad('needs whole numbers 1 ≤ MIN ≤ MAX');
  if (d.kind === 'normal' && (!(d.mean >= 1) || !(d.stddev >= 0))) throw bad('needs MEAN ≥ 1 and STDDEV ≥ 0');
  if (d.kind === 'exponential' && !(d.mean >= 1)) throw bad('needs MEAN ≥ 1');
  return d;
}

export interface Scenario {
  prompt: LengthDist;
  output: LengthDist;
}

const SCENARIO_FORMS = 'D(in,out), N(mean_in,stddev_in)/(mean_out,stddev_out), U(min_in,max_in)/(min_out,max_out), U(min,max)';

/** genai-bench traffic scenarios: `D(in,out)`, `N(μ,σ)/(μ,σ)`, `U(a,b)/(c,d)`, and `U(a,b)` for both lengths. */
export function parseScenario(text: string): Scenario {
  const s = text.replace(/\s+/g, '');
  const bad = (why: string) => configError(`--scenario ${JSON.stringify(text)}: ${why}`, `accepted forms: ${SCENARIO_FORMS}`);
  const m = /^([DNU])\(([^()]*)\)(?:\/\(([^()]*)\))?$/.exec(s);
  if (!m) throw bad('not a scenario');
  const kind = m[1] as 'D' | 'N' | 'U';
  const nums = (part: string | undefined): number[] => {
    const xs = (part ?? '').split(',').map(Number);
    if (xs.length !== 2 || xs.some((x) => !Number.isFinite(x))) throw bad('each group takes two numbers');
    return xs;
  };
  const [a, b] = nums(m[2]) as [number, number];
  if (kind === 'D') {
    if (m[3] !== undefined) throw bad('D takes one group: D(in,out)');
    return { prompt: checked({ kind: 'fixed', value: a }, bad), output: checked({ kind: 'fixed', value: b }, bad) };
  }
  if (kind === 'U' && m[3] === undefined) {
    const d = checked({ kind: 'uniform', min: a, max: b } as const, bad);
    return { prompt: d, output: { ...d } };
  }
  if (m[3] === undefined) throw bad(`${kind} takes two groups: ${kind}(a,b)/(c,d)`);
  const [c, d] = nums(m[3]) as [number, number];
  if (kind === 'N') {
    return {
      prompt: checked({ kind: 'normal', mean: a, stddev: b }, bad),
      output: checked({ kind: 'normal', mean: c, stddev: d }, bad),
    };
  }
  return {
    prompt: checked({ kind: 'uniform', min: a, max: b }, bad),
    output: checked({ kind: 'uniform', min: c, max: d }, bad),
  };
}
