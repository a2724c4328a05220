/**
 * Ground truth of the sim server: per request, when it arrived (fully parsed), when prefill started
 * and ended, and for every token its planned time and the time its bytes were handed to the kernel,
 * all on performance.now() so an in-process client shares the clock.
 *
 * Memory is bounded: finished records live in a ring limited to `maxRequests` records and
 * `maxTokens` token timestamps in total (oldest evicted first; `dropped` counts them). Defaults:
 * 20,000 requests / 4,000,000 tokens ≈ 64 MB of timestamps at most.
 */
import type { FaultKind } from './faults.js';

export type TruthOutcome = 'completed' | 'cancelled' | 'fault' | 'rejected' | 'aborted';

export interface TruthRecord {
  /** Request id (x-sim-request-id). */
  id: number;
  /** Finish order, the cursor of /sim/v1/trace?since= (0 while in flight). */
  seq: number;
  method: string;
  path: string;
  stream: boolean;
  status: number;
  promptTokens: number;
  maxTokens: number;
  ignoreEos: boolean;
  arrivalMs: number;
  prefillStartMs: number | null;
  prefillEndMs: number | null;
  /** Planned emission time of token i (engine step end + egress), performance.now() ms. */
  plannedMs: number[];
  /** When token i's bytes were handed to the kernel (for non-streaming replies: the body write). */
  writtenMs: number[];
  finishedMs: number | null;
  finishReason: 'length' | 'stop' | 'abort' | null;
  preemptions: number;
  fault: FaultKind | null;
  outcome: TruthOutcome | null;
  /** Prompt tokens the prefix cache supplied (engines with one; absent otherwise). */
  cachedTokens?: number;
  /** `sim --pd`: the prefill and decode engines that served it (0-based in each pool) and when its KV reached the decode engine. */
  prefillReplica?: number;
  decodeReplica?: number;
  transferEndMs?: number;
}

export interface TruthLimits {
  maxRequests: number;
  maxTokens: number;
}

export const DEFAULT_TRUTH_LIMITS: TruthLimits = { maxRequests: 20_000, maxTokens: 4_000_000 };

const LATE_RING = 1 << 16;

export interface EmissionStats {
  tokens: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export class TruthStore {
  private readonly live = new Map<number, TruthRecord>();
  private readonly done: TruthRecord[] = [];
  private head = 0;
  private tokensHeld = 0;
  private nextSeq = 1;
  private droppedCount = 0;
  private readonly late = new Float64Array(LATE_RING);
  private lateN = 0;
  private lateMax = 0;

  constructor(private readonly limits: TruthLimits = DEFAULT_TRUTH_LIMITS) {}

  open(rec: TruthRecord): void {
    this.live.set(rec.id, rec);
  }

  /** Streaming write lateness (written − planned) of one token, for emission() stats. */
  noteLateness(ms: number): void {
    this.late[this.lateN & (LATE_RING - 1)] = ms;
    this.lateN++;
    if (ms > this.lateMax) this.lateMax = ms;
  }

  close(rec: TruthRecord): void {
    if (!this.live.delete(rec.id)) return;
    rec.seq = this.nextSeq++;
    this.done.push(rec);
    this.tokensHeld += rec.plannedMs.length;
    while (this.done.length - this.head > this.limits.maxRequests || (this.tokensHeld > this.limits.maxTokens && this.done.length - this.head > 1)) {
      const old = this.done[this.head] as TruthRecord;
      this.done[this.head] = undefined as unknown as TruthRecord;
      this.head++;
      this.tokensHeld -= old.plannedMs.length;
      this.droppedCount++;
    }
    if (this.head > 4096 && this.head * 2 > this.done.length) {
      this.done.splice(0, this.head);
      this.head = 0;
    }
  }

  /** A request in flight or still retained after finishing. */
  get(id: number): TruthRecord | undefined {
    const l = this.live.get(id);
    if (l) return l;
    // finished records are in finish order; ids are not sorted, so scan (admin path only)
    for (let i = this.done.length - 1; i >= this.head; i--) if (this.done[i]?.id === id) return this.done[i];
    return undefined;
  }

  /** Finished records with seq > since, in finish order. */
  finished(since = 0): TruthRecord[] {
    const out: TruthRecord[] = [];
    for (let i = this.head; i < this.done.length; i++) {
      const r = this.done[i] as TruthRecord;
      if (r.seq > since) out.push(r);
    }
    return out;
  }

  get inFlight(): number {
    return this.live.size;
  }

  /** Finished records evicted by the memory bound. */
  get dropped(): number {
    return this.droppedCount;
  }

  /** Write lateness of streamed tokens (the last 65,536; max over all). */
  emission(): EmissionStats {
    const n = Math.min(this.lateN, LATE_RING);
    const sorted = Float64Array.from(this.late.subarray(0, n)).sort();
    const q = (p: number): number => (n ? (sorted[Math.min(n - 1, Math.floor(p * n))] ?? 0) : 0);
    return { tokens: this.lateN, p50Ms: q(0.5), p99Ms: q(0.99), maxMs: this.lateMax };
  }
}
