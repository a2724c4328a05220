import type { ProfileName } from '../load/profiles.js';
import type { ArrivalKind } from '../load/types.js';
import type { RunOptions } from './options.js';
import type { Problems } from './parse.js';

/** Which defaulted flags the user typed (commander fills in defaults, so the value alone cannot tell): FlagReader.explicit. */
export interface ExplicitFlags {
  profile: boolean;
  arrival: boolean;
  sweepRates: boolean;
}

/** The flags whose meaning depends on the profile, after parsing (fields of RunOptions, and the trace). */
export type ProfileFlags = Pick<RunOptions, 'profile' | 'arrival' | 'rates' | 'concurrencies' | 'burstiness' | 'warmupSeconds' | 'maxSeconds' | 'target' | 'engine'> & {
  trace?: string | undefined;
};

/**
 * A flag the chosen profile would not use is never dropped silently. Where the intent is plain (`--rate 4`
 * alone means constant-rate rows, `--concurrency 8` alone a concurrent row, `--trace` alone a replay,
 * `--burstiness` in a sweep means gamma arrivals) the profile or arrival is implied and `notices` says so in
 * one line; where flags contradict each other (`--profile sweep --rate 4`) a problem names the conflict.
 */
export function reconcileProfileFlags(f: ProfileFlags, explicit: ExplicitFlags, p: Problems, notices: string[]): { profile: ProfileName; arrival: ArrivalKind } {
  let { profile, arrival } = f;
  if (f.trace && !explicit.profile && !f.rates && !f.concurrencies) {
    profile = 'replay';
    notices.push('--trace without --profile: running the replay profile (requests at the trace\'s times)');
  }
  // --arrival poisson beside --rate picks the poisson profile; otherwise --arrival belongs to sweep rows only.
  let arrivalUsed = profile === 'sweep' || profile === 'capacity';
  const both = !explicit.profile && f.rates !== undefined && f.concurrencies !== undefined;
  if (both) {
    p.push('--rate (constant/poisson rows) and --concurrency (concurrent rows) belong to different profiles; give one of them, or --profile');
  } else if (!explicit.profile && f.rates) {
    arrivalUsed = explicit.arrival && arrival !== 'gamma';
    profile = explicit.arrival && arrival === 'poisson' ? 'poisson' : 'constant';
    notices.push(`--rate without --profile: running the ${profile} profile, one row per rate (the default sweep picks its own rates)`);
  } else if (!explicit.profile && f.concurrencies) {
    profile = 'concurrent';
    arrivalUsed = false;
    notices.push('--concurrency without --profile: running the concurrent profile, one row per stream count');
  }
  if (!both && f.rates && profile !== 'constant' && profile !== 'poisson') {
    p.push(`--rate goes with --profile constant or poisson; --profile ${profile} ${whyNoRates(profile)}`);
  }
  if (!both && f.concurrencies && profile !== 'concurrent') p.push(`--concurrency goes with --profile concurrent; --profile ${profile} does not use it`);
  if (!both && explicit.arrival && !arrivalUsed) {
    const own = profile === 'constant' || profile === 'poisson' ? ' (its name is its arrival process)' : '';
    p.push(`--arrival shapes the rate rows of sweep and capacity; --profile ${profile} does not use it${own}`);
  }
  if (explicit.sweepRates && profile !== 'sweep') p.push(`--sweep-rates sets the sweep's rows; --profile ${profile} does not use it`);
  if (f.burstiness !== undefined) {
    const rateRows = profile === 'sweep' || profile === 'capacity';
    if (rateRows && !explicit.arrival) {
      arrival = 'gamma';
      notices.push(`--burstiness ${f.burstiness}: the ${profile}'s rate rows use gamma arrivals (--arrival gamma)`);
    } else if (!rateRows || arrival !== 'gamma') {
      const now = profile === 'sweep' ? `--arrival ${arrival}` : `--profile ${profile}`;
      p.push(`--burstiness shapes gamma arrivals, which ${now} does not use; use --profile sweep --arrival gamma --burstiness K`);
    }
  }
  if (f.warmupSeconds !== undefined && f.warmupSeconds > 0 && profile === 'grid') {
    p.push('--warmup has no effect on grid cells (each cell is one burst, measured whole); leave it out');
  }
  if (f.warmupSeconds !== undefined && f.maxSeconds !== undefined && f.warmupSeconds >= f.maxSeconds) {
    p.push(
      `--warmup ${f.warmupSeconds} is not shorter than --max-seconds ${f.maxSeconds}: the warm-up would outlast the measurement; ` +
        'lower --warmup (every row already leaves out its ramp-up) or raise --max-seconds',
    );
  }
  if (f.trace && profile !== 'replay') p.push('--trace goes with --profile replay');
  if (profile === 'replay' && !f.trace) p.push('--profile replay needs --trace FILE (JSONL with timestamp/input_length/output_length, or Azure CSV)');
  if (f.target !== undefined && f.engine !== undefined) {
    p.push('--engine picks the built-in simulator\'s engine, but --target measures your server as it is; drop --engine (record the version with --engine-version, pick the protocol with --api)');
  }
  return { profile, arrival };
}

function whyNoRates(profile: ProfileName): string {
  switch (profile) {
    case 'sweep':
      return 'picks its own rates between its synchronous and throughput rows (set how many with --sweep-rates N)';
    case 'replay':
      return 'sends at the trace\'s times (scale them with --time-scale)';
    default:
      return 'does not use it';
  }
}

/**
 * `--target http://host:8000/v1` (the OpenAI base URL people paste): every dialect's paths already start at the
 * server root (/v1/chat/completions, /generate, /v2/models/…), so a trailing /v1 is dropped, with a notice.
 */
export function stripV1Suffix(url: URL, notices: string[]): string {
  const path = url.pathname.replace(/\/+$/, '');
  if (!/\/v1$/i.test(path)) return url.toString().replace(/\/+$/, '');
  const base = `${url.origin}${path.replace(/\/v1$/i, '')}${url.search}`;
  notices.push(`--target ends in /v1: using ${base} (inferbench adds /v1/… itself, and probes the server root)`);
  return base;
}
