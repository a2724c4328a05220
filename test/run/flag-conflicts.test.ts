import { describe, expect, it } from 'vitest';
import { resolveRunOptions, type RawRunFlags } from '../../src/config/run-options.js';
import { InferbenchError } from '../../src/core/errors.js';

/** Flags as commander hands them over: every defaulted flag present, marked as not typed by the user. */
function cli(typed: RawRunFlags): RawRunFlags {
  return {
    profile: 'sweep',
    arrival: 'constant',
    sweepRates: '9',
    profileExplicit: typed.profile !== undefined,
    arrivalExplicit: typed.arrival !== undefined,
    sweepRatesExplicit: typed.sweepRates !== undefined,
    ...typed,
  };
}

function resolve(typed: RawRunFlags): { opts: ReturnType<typeof resolveRunOptions>; notices: string[] } {
  const notices: string[] = [];
  const opts = resolveRunOptions(cli(typed), {}, undefined, notices);
  return { opts, notices };
}

function problem(typed: RawRunFlags): string {
  try {
    resolve(typed);
  } catch (err) {
    expect(err).toBeInstanceOf(InferbenchError);
    expect((err as InferbenchError).code).toBe('E_CONFIG');
    return (err as Error).message;
  }
  throw new Error(`no problem reported for ${JSON.stringify(typed)}`);
}

describe('flags the profile would ignore are implied or refused, never dropped', () => {
  it('--rate alone runs the constant profile and says so', () => {
    const { opts, notices } = resolve({ rate: '4' });
    expect(opts.profile).toBe('constant');
    expect(opts.rates).toEqual([4]);
    expect(notices).toEqual([expect.stringMatching(/^--rate without --profile: running the constant profile/)]);
  });

  it('--rate with --arrival poisson runs the poisson profile', () => {
    const { opts, notices } = resolve({ rate: '2,4', arrival: 'poisson' });
    expect(opts.profile).toBe('poisson');
    expect(notices[0]).toMatch(/running the poisson profile/);
  });

  it('--concurrency alone runs the concurrent profile and says so', () => {
    const { opts, notices } = resolve({ concurrency: '1,8' });
    expect(opts.profile).toBe('concurrent');
    expect(opts.concurrencies).toEqual([1, 8]);
    expect(notices[0]).toMatch(/^--concurrency without --profile: running the concurrent profile/);
  });

  it('--trace alone runs the replay profile', () => {
    const { opts, notices } = resolve({ trace: 'trace.jsonl' });
    expect(opts.profile).toBe('replay');
    expect(notices[0]).toMatch(/--trace without --profile: running the replay profile/);
  });

  it('--burstiness in the default sweep means gamma arrivals, said in one line', () => {
    const { opts, notices } = resolve({ burstiness: '0.5' });
    expect(opts.profile).toBe('sweep');
    expect(opts.arrival).toBe('gamma');
    expect(opts.burstiness).toBe(0.5);
    expect(notices).toEqual([expect.stringMatching(/--burstiness 0.5: the sweep's rate rows use gamma arrivals/)]);
  });

  it('no notice when nothing was implied', () => {
    expect(resolve({}).notices).toEqual([]);
    expect(resolve({ profile: 'constant', rate: '1' }).notices).toEqual([]);
  });

  const conflicts: Array<[string, RawRunFlags, RegExp]> = [
    ['explicit sweep with --rate', { profile: 'sweep', rate: '4' }, /--rate goes with --profile constant or poisson; --profile sweep picks its own rates/],
    ['synchronous with --rate', { profile: 'synchronous', rate: '4' }, /--rate goes with --profile constant or poisson/],
    ['constant with --concurrency', { profile: 'constant', rate: '2', concurrency: '4' }, /--concurrency goes with --profile concurrent; --profile constant/],
    ['--rate and --concurrency, no profile', { rate: '2', concurrency: '4' }, /--rate .* and --concurrency .* belong to different profiles/],
    ['--burstiness with constant', { profile: 'constant', rate: '2', burstiness: '0.5' }, /--burstiness shapes gamma arrivals, which --profile constant does not use/],
    ['--burstiness with --arrival poisson', { arrival: 'poisson', burstiness: '0.5' }, /--burstiness shapes gamma arrivals, which --arrival poisson does not use/],
    ['--arrival with concurrent', { profile: 'concurrent', concurrency: '2', arrival: 'gamma' }, /--arrival shapes the rate rows of sweep and capacity; --profile concurrent does not use it/],
    ['--sweep-rates with throughput', { profile: 'throughput', sweepRates: '3' }, /--sweep-rates sets the sweep's rows; --profile throughput does not use it/],
    ['--engine with --target', { target: 'http://127.0.0.1:8000', engine: 'sglang' }, /--engine picks the built-in simulator's engine, but --target measures your server/],
    ['--warmup with grid', { profile: 'grid', inputLens: '128', outputLens: '128', warmup: '2' }, /--warmup has no effect on grid cells/],
    ['--warmup ≥ --max-seconds', { profile: 'constant', rate: '2', warmup: '5', maxSeconds: '5' }, /--warmup 5 is not shorter than --max-seconds 5/],
  ];
  for (const [name, typed, pattern] of conflicts) {
    it(`${name}: refused, naming the conflict`, () => {
      expect(problem(typed)).toMatch(pattern);
    });
  }

  it('--burstiness with an explicit --arrival gamma sweep is accepted without a notice', () => {
    const { opts, notices } = resolve({ arrival: 'gamma', burstiness: '2' });
    expect(opts.arrival).toBe('gamma');
    expect(notices).toEqual([]);
  });
});

describe('--target with the OpenAI base URL', () => {
  it('drops a trailing /v1 (every dialect adds its own paths) and says so', () => {
    for (const url of ['http://127.0.0.1:8000/v1', 'http://127.0.0.1:8000/v1/']) {
      const { opts, notices } = resolve({ target: url });
      expect(opts.target).toBe('http://127.0.0.1:8000');
      expect(notices).toEqual([expect.stringMatching(/--target ends in \/v1: using http:\/\/127\.0\.0\.1:8000/)]);
    }
  });

  it('keeps a proxy prefix before /v1 and leaves other paths alone', () => {
    expect(resolve({ target: 'http://gw.local/llama/v1' }).opts.target).toBe('http://gw.local/llama');
    const plain = resolve({ target: 'http://gw.local/llama/' });
    expect(plain.opts.target).toBe('http://gw.local/llama');
    expect(plain.notices).toEqual([]);
  });
});

describe('--grid-latency-load', () => {
  it('defaults to 10 requests one at a time; takes rate:R and an optional request count; refuses anything else in one line', async () => {
    const { parseGridLatencyLoad } = await import('../../src/config/parse.js');
    const p: string[] = [];
    expect(parseGridLatencyLoad(undefined, p)).toEqual({ kind: 'synchronous', requests: 10 });
    expect(parseGridLatencyLoad('synchronous,5', p)).toEqual({ kind: 'synchronous', requests: 5 });
    expect(parseGridLatencyLoad('rate:2.5,20', p)).toEqual({ kind: 'rate', rate: 2.5, requests: 20 });
    expect(p).toEqual([]);
    parseGridLatencyLoad('burst', p);
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/--grid-latency-load "burst": write synchronous or rate:R/);
  });
});
