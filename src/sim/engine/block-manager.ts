import { BLOCK_TOKENS } from '../cost/memory.js';
import type { Seq } from './seq.js';

/** Paged KV cache: 16-token blocks, a watermark for admissions, no swapping (preemption recomputes). */
export class BlockManager {
  readonly total: number;
  readonly watermarkBlocks: number;
  private freeBlocks: number;

  constructor(total: number, watermark: number) {
    this.total = total;
    this.freeBlocks = total;
    this.watermarkBlocks = Math.floor(total * watermark);
  }

  get free(): number {
    return this.freeBlocks;
  }

  get used(): number {
    return this.total - this.freeBlocks;
  }

  /** Extra blocks a sequence needs to hold `tokens` tokens of KV. */
  extraFor(seq: Seq, tokens: number): number {
    const need = Math.ceil(tokens / BLOCK_TOKENS) - seq.blocks;
    return need > 0 ? need : 0;
  }

  /** Admission check: leaves the watermark free. */
  canAdmit(extra: number): boolean {
    return this.freeBlocks - extra >= this.watermarkBlocks;
  }

  canAppend(extra: number): boolean {
    return extra <= this.freeBlocks;
  }

  allocate(seq: Seq, extra: number): void {
    if (extra > this.freeBlocks) throw new Error(`KV over-allocation: need ${extra}, free ${this.freeBlocks}`);
    this.freeBlocks -= extra;
    seq.blocks += extra;
  }

  release(seq: Seq): void {
    this.freeBlocks += seq.blocks;
    seq.blocks = 0;
  }
}
