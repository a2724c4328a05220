import { Rng } from '../core/rng.js';
import type { ArrivalKind } from './types.js';

/**
 * An arrival process: absolute target offsets (ms from stage start), never relative sleeps, so
 * dispatch delays cannot accumulate into a lower achieved rate. Pure and seeded.
 */
export interface ArrivalProcess {
  /** Offset of the next arrival in ms from the stage start. */
  next(): number;
}

export interface ArrivalOptions {
  kind: Exclude<ArrivalKind, 'trace'>;
  /** Requests per second; Infinity means everything at t=0. */
  rate: number;
  seed: number;
  /** Gamma shape (vLLM's burstiness); 1 = Poisson. */
  burstiness?: number;
}

export function createArrivalProcess(opts: ArrivalOptions): ArrivalProcess {
  const { kind, rate } = opts;
  if (!(rate > 0)) throw new RangeError(`arrival rate must be > 0, got ${rate}`);
  if (rate === Infinity) return { next: () => 0 };
  const meanGapMs = 1000 / rate;
  if (kind === 'constant') {
    let i = 0;
    return { next: () => meanGapMs * i++ };
  }
  const rng = new Rng(opts.seed);
  const shape = kind === 'gamma' ? (opts.burstiness ?? 1) : 1;
  if (!(shape > 0)) throw new RangeError(`burstiness must be > 0, got ${shape}`);
  let t = 0;
  let first = true;
  return {
    next: () => {
      // The first request goes at t=0 so a stage never starts with dead time.
      if (first) {
        first = false;
        return 0;
      }
      t += shape === 1 ? rng.exponential(meanGapMs) : rng.gamma(shape, meanGapMs / shape);
      return t;
    },
  };
}
