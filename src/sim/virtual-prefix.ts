/**
 * Shared prefixes in virtual time (issue 34): `predict` and `plan` build requests of token counts, not text, so a
 * request of a prefix group (`--prefix-tokens T --prefix-groups G`) carries its group and the prefix's length
 * instead. These are the block hashes such a request stands for: its leading blocks that lie wholly inside the
 * shared prefix hash by (group, block), the rest by (item, block), so two requests share exactly the blocks the
 * same two prompts sent as text to `inferbench sim` share (the prefix, up to the last full 16-token block), and a
 * request sent again (the same item) shares all of its blocks. The values are chained in effect: once two prompts
 * differ, no later block of theirs is equal. The engine's prefix cache and the prefix-aware router both take them.
 */
import { BLOCK_TOKENS } from './cost/memory.js';
import type { WorkItem } from '../workload/types.js';

/** Blocks per prompt the keys leave room for (1M tokens). */
const BLOCK_SPAN = 65_536;
/** Unique blocks above every group's: 2^40 + item × 2^16 + block stays below 2^53 for 2^36 items. */
const UNIQUE_BASE = 2 ** 40;

/** The block hashes of a lengths-only request with a shared prefix; undefined for one without. */
export function prefixBlockHashes(item: Pick<WorkItem, 'promptTokens' | 'prefixGroup' | 'prefixTokens'>, itemIndex: number): number[] | undefined {
  if (item.prefixGroup === undefined || item.prefixTokens === undefined) return undefined;
  const full = Math.min(Math.floor(item.promptTokens / BLOCK_TOKENS), BLOCK_SPAN);
  const shared = Math.min(Math.floor(item.prefixTokens / BLOCK_TOKENS), full);
  const out: number[] = [];
  for (let b = 0; b < shared; b++) out.push(1 + item.prefixGroup * BLOCK_SPAN + b);
  for (let b = shared; b < full; b++) out.push(UNIQUE_BASE + (itemIndex % 2 ** 36) * BLOCK_SPAN + b);
  return out;
}
