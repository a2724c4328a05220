import { BLOCK_TOKENS } from '../cost/memory.js';
import type { Seq } from './seq.js';

/** What a prefix-cache lookup found for a sequence's prompt, before it is committed. */
export interface PrefixHit {
  /** Leading prompt blocks already cached. */
  blocks: number;
  /** Of those, blocks nobody references now (they stop being evictable once committed). */
  idle: number;
}

const NO_HIT: PrefixHit = { blocks: 0, idle: 0 };
/** Admissions the recent hit rate covers. */
const RECENT = 32;

/**
 * Paged KV cache: 16-token blocks, a watermark for admissions, no swapping (preemption recomputes).
 *
 * With a prefix cache (vLLM's automatic prefix caching, SGLang's radix cache), full prompt blocks are kept
 * under their chained hash once computed. A later prompt whose leading blocks hash the same shares them
 * (reference counted) and skips their prefill. Blocks nobody references stay cached but count as free: an
 * allocation that finds no truly free block evicts the least recently released one (LRU).
 */
export class BlockManager {
  readonly total: number;
  readonly watermarkBlocks: number;
  /** Blocks neither held by a sequence nor cached. */
  private freeBlocks: number;
  private readonly cache: Map<number, { refs: number }> | undefined;
  /** Cached blocks with no reference, oldest release first (Map keeps insertion order). */
  private readonly idle = new Map<number, true>();
  hitTokensTotal = 0;
  queryTokensTotal = 0;
  /** (hit, queried) tokens of the last RECENT admissions, for a hit-rate gauge that follows the load (SGLang's). */
  private readonly recent: number[] = [];

  constructor(total: number, watermark: number, prefixCaching = false) {
    this.total = total;
    this.freeBlocks = total;
    this.watermarkBlocks = Math.floor(total * watermark);
    this.cache = prefixCaching ? new Map() : undefined;
  }

  get prefixCaching(): boolean {
    return this.cache !== undefined;
  }

  /** Blocks an allocation can take: truly free ones plus idle cached ones (evicted on demand). */
  get free(): number {
    return this.freeBlocks + this.idle.size;
  }

  get used(): number {
    return this.total - this.free;
  }

  /** Extra blocks a sequence needs to hold `tokens` tokens of KV. */
  extraFor(seq: Seq, tokens: number): number {
    const need = Math.ceil(tokens / BLOCK_TOKENS) - seq.blocks;
    return need > 0 ? need : 0;
  }

  /** Admission check: leaves the watermark free. */
  canAdmit(extra: number): boolean {
    return this.free - extra >= this.watermarkBlocks;
  }

  canAppend(extra: number): boolean {
    return extra <= this.free;
  }

  allocate(seq: Seq, extra: number): void {
    if (extra > this.free) throw new Error(`KV over-allocation: need ${extra}, free ${this.free}`);
    let fromFree = Math.min(extra, this.freeBlocks);
    this.freeBlocks -= fromFree;
    for (; fromFree < extra; fromFree++) this.evictOne();
    seq.blocks += extra;
  }

  release(seq: Seq): void {
    const shared = seq.sharedHashes;
    this.freeBlocks += seq.blocks - shared.length;
    seq.blocks = 0;
    if (shared.length === 0) return;
    // Tail blocks first, so that eviction takes a prompt's end before its (more widely shared) start, as vLLM does.
    for (let i = shared.length - 1; i >= 0; i--) this.unref(shared[i] as number);
    seq.sharedHashes = [];
  }

  /**
   * Leading prompt blocks of a sequence not yet admitted that the cache holds. At least the prompt's last token
   * is always computed (it yields the first output token), so a fully cached prompt recomputes its last block.
   */
  lookup(seq: Seq): PrefixHit {
    const hashes = seq.blockHashes;
    if (!this.cache || !hashes || seq.computed > 0) return NO_HIT;
    const max = Math.min(hashes.length, Math.floor((seq.prompt - 1) / BLOCK_TOKENS));
    let blocks = 0;
    let idle = 0;
    for (; blocks < max; blocks++) {
      const h = hashes[blocks] as number;
      const e = this.cache.get(h);
      if (!e) break;
      if (e.refs === 0) idle++;
    }
    return { blocks, idle };
  }

  /** Admit with a lookup's hit: reference its blocks and mark their tokens computed. Counts the query. */
  commit(seq: Seq, hit: PrefixHit): void {
    if (!this.cache || !seq.blockHashes || seq.computed > 0) return;
    this.queryTokensTotal += seq.prompt;
    this.hitTokensTotal += hit.blocks * BLOCK_TOKENS;
    this.recent.push(hit.blocks * BLOCK_TOKENS, seq.prompt);
    if (this.recent.length > 2 * RECENT) this.recent.splice(0, 2);
    seq.cachedTokens = hit.blocks * BLOCK_TOKENS;
    for (let i = 0; i < hit.blocks; i++) {
      const h = seq.blockHashes[i] as number;
      this.ref(h);
      seq.sharedHashes.push(h);
    }
    seq.blocks += hit.blocks;
    seq.computed = hit.blocks * BLOCK_TOKENS;
  }

  /** Hit rate over the last RECENT admissions (0 before any). */
  get recentHitRate(): number {
    let hit = 0;
    let query = 0;
    for (let i = 0; i < this.recent.length; i += 2) {
      hit += this.recent[i] as number;
      query += this.recent[i + 1] as number;
    }
    return query > 0 ? hit / query : 0;
  }

  /** After a step: put the sequence's newly completed prompt blocks in the cache (they become shareable). */
  register(seq: Seq): void {
    const hashes = seq.blockHashes;
    if (!this.cache || !hashes) return;
    const full = Math.min(hashes.length, Math.floor(Math.min(seq.computed, seq.prompt) / BLOCK_TOKENS));
    for (let i = seq.sharedHashes.length; i < full; i++) {
      const h = hashes[i] as number;
      if (this.cache.has(h)) {
        // Another sequence computed the same block meanwhile: share that one and free ours.
        this.ref(h);
        this.freeBlocks++;
      } else {
        this.cache.set(h, { refs: 1 });
      }
      seq.sharedHashes.push(h);
    }
  }

  private ref(h: number): void {
    const e = this.cache?.get(h);
    if (!e) throw new Error('prefix cache: reference to an uncached block');
    if (e.refs === 0) this.idle.delete(h);
    e.refs++;
  }

  private unref(h: number): void {
    const e = this.cache?.get(h);
    if (!e) return;
    e.refs--;
    if (e.refs === 0) this.idle.set(h, true);
  }

  private evictOne(): void {
    const oldest = this.idle.keys().next();
    if (oldest.done) throw new Error('KV over-allocation: nothing to evict');
    this.idle.delete(oldest.value);
    this.cache?.delete(oldest.value);
  }
}
