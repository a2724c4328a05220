/** What the sim server decides per request before the engine runs it: its identity, natural length and output. */
import { Rng } from '../../core/rng.js';
import { type LengthDist, sampleLength } from '../../workload/lengths.js';
import type { FinishReason, GenIdentity, GenPlan } from '../wire/types.js';

/** The rule the engine uses to pick the output length, so the last token can carry the finish frames. */
export function expectedOutput(plan: GenPlan, natural: number, maxModelLen: number): { tokens: number; reason: FinishReason } {
  const prompt = Math.max(1, Math.floor(plan.promptTokens));
  let target = Math.max(1, Math.floor(plan.maxTokens));
  let reason: FinishReason = 'length';
  if (!plan.ignoreEos) {
    const n = Math.max(1, Math.floor(Math.max(natural, plan.minTokens ?? 0)));
    if (n < target) {
      target = n;
      reason = 'stop';
    }
  }
  if (prompt + target > maxModelLen) {
    target = Math.max(1, maxModelLen - prompt);
    reason = 'length';
  }
  return { tokens: target, reason };
}

export function mix(seed: number, n: number, salt: number): number {
  return (Math.imul(n + 1, 0x9e3779b1) ^ Math.imul(seed | 0, 0x85ebca6b) ^ Math.imul(salt, 0xc2b2ae35)) >>> 0;
}

export function identity(seed: number, seq: number, reasoning: LengthDist | undefined): GenIdentity {
  const r = new Rng(mix(seed, seq, 7));
  let hex = '';
  for (let i = 0; i < 4; i++) hex += (Math.floor(r.next() * 4294967296) >>> 0).toString(16).padStart(8, '0');
  const id: GenIdentity = { seq, hex, offset: r.int(0, 255), createdSec: Math.floor(Date.now() / 1000) };
  if (reasoning) id.reasoning = sampleLength(reasoning, new Rng(mix(seed, seq, 13)));
  return id;
}

/** Seeded "model's own" output length for requests that do not force it: lognormal, median 192. */
export function naturalTokens(seed: number, seq: number): number {
  const r = new Rng(mix(seed, seq, 11));
  return Math.max(1, Math.round(Math.exp(r.normal(Math.log(192), 0.8))));
}
