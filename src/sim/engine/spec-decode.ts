import { configError } from '../../core/errors.js';
import type { Rng } from '../../core/rng.js';

/** Speculative decoding: K draft tokens per decode step, verified together with the step's own token. */
export interface SpecDecode {
  /** Draft length K (tokens proposed per step). */
  k: number;
  /** Draft acceptance rate, accepted / draft tokens: what vLLM's counters measure. */
  accept: number;
}

/** `--spec-decode K:ACCEPT`, e.g. `4:0.7`. */
export function parseSpecDecode(text: string): SpecDecode {
  const m = /^\s*(\d+)\s*:\s*([0-9.]+)\s*$/.exec(text);
  const k = m ? Number(m[1]) : Number.NaN;
  const accept = m ? Number(m[2]) : Number.NaN;
  if (!m || !Number.isInteger(k) || k < 1 || k > 16 || !(accept >= 0 && accept <= 1)) {
    throw configError(`--spec-decode ${JSON.stringify(text)}: expected K:ACCEPT with K a whole number 1–16 and ACCEPT in 0–1`, 'e.g. --spec-decode 4:0.7');
  }
  return { k, accept };
}

/**
 * Drafts are accepted in order until the first rejection (a truncated geometric count, 0..K). The per-draft
 * continuation probability q is solved so that the mean accepted count over K equals the acceptance rate asked
 * for: Σ_{j=1..K} q^j = ACCEPT·K. (Taking q = ACCEPT itself would make the measured rate lower than told.)
 */
export function continuationProbability(spec: SpecDecode): number {
  const target = spec.accept * spec.k;
  const mean = (q: number): number => {
    let s = 0;
    let p = 1;
    for (let j = 1; j <= spec.k; j++) s += (p *= q);
    return s;
  };
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (mean(mid) < target) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** Accepted drafts of one verification step. */
export function drawAccepted(k: number, q: number, rng: Rng): number {
  let a = 0;
  while (a < k && rng.next() < q) a++;
  return a;
}
