/**
 * Several replicas behind the client (`run --target URL,URL,… --balance P`, issue 34): one sender per endpoint and a
 * policy that picks one per request. The pick is O(replicas) integer work on the hot path (no allocation, no await):
 * round-robin takes the next live replica; least-inflight the live one with the fewest requests in flight (ties: the
 * lowest index after the last pick, so an idle fleet is still spread); session the conversation's own replica
 * (its affinity, the conversation's index, modulo the replicas; a dead one's conversations move to the next live one).
 * A replica whose connections are refused is marked down and skipped from then on; its record says so.
 */
import type { Dialect, GenerationRequest, HttpRequestPlan } from '../dialects/types.js';
import type { Exchange } from '../transport/exchange.js';
import type { ExchangeSender, SendRoute } from './http-runner.js';

export const BALANCE_POLICIES = ['round-robin', 'least-inflight', 'session'] as const;
export type BalancePolicy = (typeof BALANCE_POLICIES)[number];

/** A replica that went down: when (the run's clock) and the error that said so. */
export interface ReplicaDown {
  atMs: number;
  error: string;
}

export class ReplicaSender implements ExchangeSender {
  private readonly inFlight: Int32Array;
  private readonly sent: Float64Array;
  private readonly downAt: (ReplicaDown | undefined)[];
  private next = 0;

  constructor(
    private readonly senders: readonly ExchangeSender[],
    private readonly policy: BalancePolicy,
  ) {
    if (senders.length === 0) throw new Error('ReplicaSender: no replicas');
    this.inFlight = new Int32Array(senders.length);
    this.sent = new Float64Array(senders.length);
    this.downAt = senders.map(() => undefined);
  }

  get replicas(): number {
    return this.senders.length;
  }

  /** How requests are spread (the lines under a row suggest another policy where this one caused an imbalance). */
  get balance(): BalancePolicy {
    return this.policy;
  }

  /** Requests handed to each replica so far. */
  sentCounts(): number[] {
    return Array.from(this.sent);
  }

  /** Replicas that went down, by index (undefined: up). */
  down(): readonly (ReplicaDown | undefined)[] {
    return this.downAt;
  }

  /** Which replica the next request with this route goes to (exported for the policy's tests). */
  pick(route?: SendRoute): number {
    const n = this.senders.length;
    if (this.policy === 'session' && route?.affinity !== undefined) {
      const home = route.affinity % n;
      for (let k = 0; k < n; k++) {
        const i = (home + k) % n;
        if (this.downAt[i] === undefined) return i;
      }
      return home;
    }
    if (this.policy === 'least-inflight') {
      let best = -1;
      for (let k = 0; k < n; k++) {
        const i = (this.next + k) % n;
        if (this.downAt[i] !== undefined) continue;
        if (best < 0 || (this.inFlight[i] as number) < (this.inFlight[best] as number)) best = i;
      }
      if (best >= 0) {
        this.next = (best + 1) % n;
        return best;
      }
      return this.next;
    }
    for (let k = 0; k < n; k++) {
      const i = (this.next + k) % n;
      if (this.downAt[i] === undefined) {
        this.next = (i + 1) % n;
        return i;
      }
    }
    // Every replica is down: keep sending round the ring, so the records say each one is refusing.
    const i = this.next;
    this.next = (i + 1) % n;
    return i;
  }

  async send(plan: HttpRequestPlan, dialect: Dialect, request: GenerationRequest, signal?: AbortSignal, route?: SendRoute): Promise<Exchange & { worker?: number; replica?: number }> {
    const i = this.pick(route);
    const sender = this.senders[i] as ExchangeSender;
    this.inFlight[i] = (this.inFlight[i] as number) + 1;
    this.sent[i] = (this.sent[i] as number) + 1;
    try {
      const ex = await sender.send(plan, dialect, request, signal, route);
      // Refused connections mean the replica is gone (a slow or failing one still answers: it stays in).
      if (ex.error && (ex.error.code === 'E_CONNECT' || ex.error.code === 'E_CONNECT_TIMEOUT') && this.downAt[i] === undefined) {
        this.downAt[i] = { atMs: ex.endAtMs, error: `${ex.error.code}: ${ex.error.message}` };
      }
      return Object.assign(ex, { replica: i });
    } finally {
      this.inFlight[i] = (this.inFlight[i] as number) - 1;
    }
  }

  abortAll(reason?: string): void {
    for (const s of this.senders) s.abortAll(reason);
  }

  get leadMs(): number | undefined {
    return this.senders[0]?.leadMs;
  }
}
