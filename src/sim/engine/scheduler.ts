import { BLOCK_TOKENS } from '../cost/memory.js';
import type { BatchSummary } from '../cost/step-cost.js';
import type { BlockManager } from './block-manager.js';
import type { EngineProfile } from './profiles.js';
import { type Deque, type Seq, pendingTokens } from './seq.js';

export interface SchedulerLimits {
  maxNumSeqs: number;
  maxNumBatchedTokens: number;
  /** Speculative decoding's K: a decode reserves KV for its drafts too (vLLM's lookahead slots). */
  specK?: number;
}

/** One step's work. `tokens[i]` new tokens are computed for `seqs[i]`. */
export interface ScheduledBatch {
  seqs: Seq[];
  tokens: number[];
  summary: BatchSummary;
  /** Requests that can never fit the KV cache: the engine aborts them. */
  rejected: Seq[];
  preempted: Seq[];
}

/**
 * vLLM-style schedulers. Both mutate `waiting`, `running` and the block table exactly as the engines do:
 * prompt-first (vLLM 0.2–0.6, SGLang) and running-first token budget (vLLM V1, lmdeploy, TGI 3).
 */
export class Scheduler {
  constructor(
    private readonly profile: EngineProfile,
    private readonly limits: SchedulerLimits,
    private readonly waiting: Deque<Seq>,
    private readonly running: Seq[],
    private readonly blocks: BlockManager,
  ) {}

  next(): ScheduledBatch | null {
    const b = newBatch();
    if (this.profile.policy === 'prompt-first') {
      this.admitPrompts(b);
      if (b.seqs.length === 0) this.decodeAll(b);
    } else {
      this.mixed(b);
    }
    if (b.seqs.length === 0 && b.rejected.length === 0 && b.preempted.length === 0) return null;
    return b;
  }

  /**
   * KV tokens a sequence must hold after computing `tokens` more. TGI reserves the prompt and its output
   * up front, segment by segment (TGI 3: 1024 tokens), so a reservation only grows at a segment boundary.
   */
  private kvTokensAfter(s: Seq, tokens: number): number {
    const lookahead = s.prefillDone && tokens === 1 ? (this.limits.specK ?? 0) : 0;
    if (!this.profile.reserveFullOutput) return s.computed + tokens + lookahead;
    const seg = this.profile.reserveSegment;
    const reserved = seg === Infinity ? s.target : Math.min(s.target, (Math.floor(s.generated / seg) + 1) * seg);
    return s.prompt + reserved;
  }

  private fitsEver(s: Seq): boolean {
    const need = Math.ceil(this.kvTokensAfter(s, pendingTokens(s)) / 16);
    return need <= this.blocks.total - this.blocks.watermarkBlocks;
  }

  private admitPrompts(b: ScheduledBatch): void {
    const { maxNumBatchedTokens: budget, maxNumSeqs } = this.limits;
    const pad = this.profile.padPrompts;
    let sum = 0;
    let longest = 0;
    let count = 0;
    for (;;) {
      const s = this.waiting.peek();
      if (!s) break;
      const hit = this.blocks.lookup(s);
      const cached = hit.blocks * BLOCK_TOKENS;
      const need = pendingTokens(s) - cached;
      if (!this.fitsEver(s) || (!this.profile.chunkedPrefill && need > budget)) {
        this.waiting.shift();
        b.rejected.push(s);
        continue;
      }
      if (this.running.length + 1 > maxNumSeqs) break;
      let tokens = need;
      if (this.profile.chunkedPrefill) {
        tokens = Math.min(need, budget - sum);
        if (tokens <= 0) break;
      } else if (pad) {
        const l = Math.max(longest, need);
        if ((count + 1) * l > budget || (count + 1) * l - (sum + need) > this.profile.maxPaddings) break;
      } else if (sum + need > budget) {
        break;
      }
      const extra = this.blocks.extraFor(s, this.kvTokensAfter(s, tokens) + cached) - hit.blocks;
      if (!this.blocks.canAdmit(extra + hit.idle)) break;
      this.blocks.commit(s, hit);
      this.blocks.allocate(s, extra);
      this.addChunk(b, s, tokens);
      sum += tokens;
      count++;
      if (need > longest) longest = need;
      if (tokens < need) break; // a partial chunk used the rest of the budget; it stays at the head
      this.waiting.shift();
      s.state = 2;
      this.running.push(s);
    }
    if (pad && count > 1) for (let i = 0; i < b.summary.prefillCount; i++) b.summary.prefillTokens[i] = longest;
  }

  /** vLLM V0 decode step: every running sequence needs one slot; preempt the newest when KV runs out. */
  private decodeAll(b: ScheduledBatch): void {
    const run = this.running;
    let i = 0;
    while (i < run.length) {
      const s = run[i] as Seq;
      const extra = this.blocks.extraFor(s, this.kvTokensAfter(s, 1));
      let ok = true;
      while (!this.blocks.canAppend(extra)) {
        const victim = run.pop() as Seq;
        this.preempt(victim, b);
        if (victim === s) {
          ok = false;
          break;
        }
      }
      if (!ok) break;
      this.blocks.allocate(s, extra);
      this.addDecode(b, s);
      i++;
    }
  }

  /** vLLM V1: running requests first (decodes and unfinished prefills) under one token budget, then waiting ones. */
  private mixed(b: ScheduledBatch): void {
    let budget = this.limits.maxNumBatchedTokens;
    const run = this.running;
    for (let i = 0; i < run.length && budget > 0; i++) {
      const s = run[i] as Seq;
      const tokens = Math.min(pendingTokens(s), budget);
      const extra = this.blocks.extraFor(s, this.kvTokensAfter(s, tokens));
      let scheduled = true;
      while (!this.blocks.canAppend(extra)) {
        const victim = run[run.length - 1] as Seq;
        run.pop();
        this.preempt(victim, b);
        if (victim === s) {
          scheduled = false;
          break;
        }
      }
      if (!scheduled) break;
      this.blocks.allocate(s, extra);
      if (tokens === 1 && s.prefillDone) this.addDecode(b, s);
      else this.addChunk(b, s, tokens);
      budget -= tokens;
    }
    if (b.preempted.length > 0) return;
    while (budget > 0 && run.length < this.limits.maxNumSeqs) {
      const s = this.waiting.peek();
      if (!s) break;
      if (!this.fitsEver(s)) {
        this.waiting.shift();
        b.rejected.push(s);
        continue;
      }
      const hit = this.blocks.lookup(s);
      const cached = hit.blocks * BLOCK_TOKENS;
      const tokens = Math.min(pendingTokens(s) - cached, budget);
      const extra = this.blocks.extraFor(s, this.kvTokensAfter(s, tokens) + cached) - hit.blocks;
      if (!this.blocks.canAdmit(extra + hit.idle)) break;
      this.blocks.commit(s, hit);
      this.blocks.allocate(s, extra);
      this.waiting.shift();
      s.state = 2;
      run.push(s);
      this.addChunk(b, s, tokens);
      budget -= tokens;
    }
  }

  private preempt(victim: Seq, b: ScheduledBatch): void {
    this.blocks.release(victim);
    victim.computed = 0;
    victim.state = 1;
    victim.preemptions++;
    this.waiting.unshift(victim);
    b.preempted.push(victim);
  }

  private addDecode(b: ScheduledBatch, s: Seq): void {
    b.seqs.push(s);
    b.tokens.push(1);
    b.summary.decodeSeqs++;
    b.summary.decodeCtxSum += s.computed + 1;
    b.summary.emittingSeqs++;
    if (this.limits.specK) b.summary.specK = this.limits.specK;
  }

  private addChunk(b: ScheduledBatch, s: Seq, tokens: number): void {
    const sm = b.summary;
    b.seqs.push(s);
    b.tokens.push(tokens);
    sm.prefillPrior[sm.prefillCount] = s.computed;
    sm.prefillTokens[sm.prefillCount] = tokens;
    sm.prefillCount++;
    // A pooling prompt (target 0) runs no LM head: it samples nothing.
    if (tokens === pendingTokens(s) && s.target > 0) sm.emittingSeqs++;
  }
}

function newBatch(): ScheduledBatch {
  return {
    seqs: [],
    tokens: [],
    rejected: [],
    preempted: [],
    summary: { decodeSeqs: 0, decodeCtxSum: 0, prefillCount: 0, prefillPrior: [], prefillTokens: [], emittingSeqs: 0 },
  };
}
