import type { StageSummary } from '../results/stage.js';

/**
 * Cached prompt tokens per request up to this many are chance, not a prefix-cache hit: unique prompts still share
 * their first word or two with the slot's previous prompt (llama.cpp reports that one token as cached on every
 * request). The llama.cpp suite counts the same way (test/llamacpp).
 */
export const CHANCE_SHARED_TOKENS = 2;

/**
 * Whether a row's prefix-cache hits exceed chance: some request reported more than CHANCE_SHARED_TOKENS cached
 * tokens (per-request usage), or — with only the server's own counters or gauge, which cannot tell — any hit at all.
 */
export function cacheBeyondChance(s: Pick<StageSummary, 'prefixCacheHitRate' | 'prefixCacheSource' | 'metrics'>): boolean {
  if ((s.prefixCacheHitRate ?? 0) <= 0) return false;
  const perRequest = s.metrics.cachedTokens;
  if (s.prefixCacheSource === 'usage' && perRequest && perRequest.count > 0) return perRequest.max > CHANCE_SHARED_TOKENS;
  return true;
}
