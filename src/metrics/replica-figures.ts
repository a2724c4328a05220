/**
 * Per-replica figures of a row (issue 34): the measured requests each replica served, folded in as records finish
 * (the row's StageAccumulator feeds it only records that carry `replica`), how many the client held in flight on
 * each, and the lines that name a replica markedly slower, busier, loaded with more requests, or down compared with
 * the rest.
 */
import type { RequestRecord } from '../results/record.js';
import type { ReplicaFigures } from '../results/stage.js';
import { computeStats } from './stats.js';

interface Tally {
  name?: string;
  sent: number;
  ok: number;
  errors: number;
  incomplete: number;
  ttft: number[];
  itl: number[];
  outputTokens: number;
  cached: number;
  promptWithCache: number;
}

/** A replica this much slower (TTFT or ITL median) or busier (share of requests) than the rest is named. */
export const REPLICA_SKEW_FACTOR = 1.5;
/**
 * A replica whose mean requests in flight exceed the others' by this factor was not loaded as they were: a higher TTFT
 * there is its queue (round-robin under a closed loop: the replica that happens to queue keeps its requests longer,
 * so it holds more of them), not a slower server.
 */
export const IN_FLIGHT_SKEW_FACTOR = 1.25;
/** Fewer successes than this on a replica say nothing about its speed. */
const MIN_OK_FOR_SPEED = 5;

export class ReplicaTally {
  private readonly byIndex = new Map<number, Tally>();
  /** Every request's [sent, end] on each replica, warm-up and cool-down included: they occupy it too. */
  private readonly spans = new Map<number, number[]>();

  /** Any record with `replica` (measured or not): the time it held a place on that replica. */
  occupy(replica: number, sentMs: number, endMs: number): void {
    let list = this.spans.get(replica);
    if (!list) this.spans.set(replica, (list = []));
    list.push(sentMs, endMs);
  }

  /** Time-weighted mean of the requests in flight on a replica over [fromMs, toMs]. */
  private meanInFlight(replica: number, fromMs: number, toMs: number): number | undefined {
    const list = this.spans.get(replica);
    if (!list || !(toMs > fromMs)) return undefined;
    let busy = 0;
    for (let i = 0; i < list.length; i += 2) busy += Math.max(0, Math.min(list[i + 1] as number, toMs) - Math.max(list[i] as number, fromMs));
    return busy / (toMs - fromMs);
  }

  get size(): number {
    return this.byIndex.size;
  }

  /** One measured record (warm-up excluded by the caller) with `replica` set. */
  add(r: RequestRecord & { replica: number }): void {
    let t = this.byIndex.get(r.replica);
    if (!t) {
      t = { sent: 0, ok: 0, errors: 0, incomplete: 0, ttft: [], itl: [], outputTokens: 0, cached: 0, promptWithCache: 0 };
      this.byIndex.set(r.replica, t);
    }
    if (r.replicaName !== undefined) t.name ??= r.replicaName;
    t.sent++;
    if (r.status === 'error') t.errors++;
    else if (r.status === 'incomplete') t.incomplete++;
    else {
      t.ok++;
      t.outputTokens += r.outputTokens;
      if (r.ttftMs !== undefined) t.ttft.push(r.ttftMs);
      if (r.itlMs !== undefined) t.itl.push(r.itlMs);
      if (r.cachedTokens !== undefined) {
        t.cached += r.cachedTokens;
        t.promptWithCache += r.promptTokens;
      }
    }
  }

  /**
   * Every replica seen, by index; `durationS` is the row's window length (its throughput's division), `window` where
   * it lay (the run's clock), over which each replica's mean in flight is taken.
   */
  figures(durationS: number, window?: { fromMs: number; toMs: number }): ReplicaFigures[] {
    return [...this.byIndex.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([index, t]) => {
        const ttft = computeStats(t.ttft);
        const itl = computeStats(t.itl);
        const inFlight = window ? this.meanInFlight(index, window.fromMs, window.toMs) : undefined;
        return {
          index,
          ...(t.name !== undefined ? { name: t.name } : {}),
          sent: t.sent,
          ok: t.ok,
          errors: t.errors,
          incomplete: t.incomplete,
          ...(ttft ? { ttftMs: { p50: ttft.median, p99: ttft.p99 } } : {}),
          ...(itl ? { itlMs: { p50: itl.median, p99: itl.p99 } } : {}),
          outputTokenThroughput: durationS > 0 ? t.outputTokens / durationS : 0,
          ...(inFlight !== undefined ? { meanInFlight: inFlight } : {}),
          ...(t.promptWithCache > 0 ? { prefixCacheHitRate: t.cached / t.promptWithCache, prefixCacheSource: 'usage' as const } : {}),
        };
      });
  }
}

/** How a replica is named in a line: its URL or the router's name for it, else its index. */
export function replicaLabel(r: ReplicaFigures): string {
  return `replica ${r.index}${r.url ? ` (${r.url})` : r.name !== undefined && r.name !== String(r.index) ? ` (${r.name})` : ''}`;
}

/**
 * The lines under a row: a replica down; a replica slower than the rest — its ITL median REPLICA_SKEW_FACTOR× the
 * median of the others' (each token takes longer), or its TTFT median so at a like load; a replica whose TTFT is that
 * high while it held IN_FLIGHT_SKEW_FACTOR× the others' requests in flight and its ITL is not slower: its requests
 * queued behind the balance's split, which the line says instead of blaming the server; a replica that served
 * REPLICA_SKEW_FACTOR× its even share of the row's requests. `balance`: the client's --balance, absent behind a router.
 */
export function replicaWarnings(list: readonly ReplicaFigures[], opts: { balance?: string } = {}): string[] {
  const out: string[] = [];
  for (const r of list) if (r.down) out.push(`${replicaLabel(r)} went down ${r.down.atS.toFixed(1)} s into the row (${r.down.error}); the others carried the rest`);
  if (list.length < 2) return out;
  const timed = (metric: 'ttftMs' | 'itlMs'): ReplicaFigures[] => list.filter((r) => r.ok >= MIN_OK_FOR_SPEED && r[metric] !== undefined);
  for (const metric of ['ttftMs', 'itlMs'] as const) {
    for (const r of timed(metric)) {
      const slow = skewed(r, timed(metric), (o) => o[metric]?.p50, REPLICA_SKEW_FACTOR);
      if (!slow) continue;
      const ms = `p50 ${slow.mine.toFixed(1)} ms vs ${slow.rest.toFixed(1)} ms on the others`;
      const held = metric === 'ttftMs' ? skewed(r, list, (o) => o.meanInFlight, IN_FLIGHT_SKEW_FACTOR) : undefined;
      if (held && !skewed(r, timed('itlMs'), (o) => o.itlMs?.p50, REPLICA_SKEW_FACTOR)) {
        const itlRest = othersMedian(r, timed('itlMs'), (o) => o.itlMs?.p50);
        const itl = r.itlMs && itlRest !== undefined ? `; ITL p50 ${r.itlMs.p50.toFixed(1)} ms vs ${itlRest.toFixed(1)} ms, alike` : '';
        out.push(`${replicaLabel(r)} held more requests in flight: ${held.mine.toFixed(1)} vs ${held.rest.toFixed(1)} on the others, so its requests queued (TTFT ${ms}${itl}) — not a slower server but ${splitOf(opts.balance)}`);
      } else out.push(`${replicaLabel(r)} is slower: ${metric === 'ttftMs' ? 'TTFT' : 'ITL'} ${ms}`);
    }
  }
  const total = list.reduce((a, r) => a + r.sent, 0);
  if (total >= 10 * list.length) {
    const even = total / list.length;
    for (const r of list) {
      if (r.sent > REPLICA_SKEW_FACTOR * even) out.push(`${replicaLabel(r)} is busier: it served ${r.sent} of ${total} requests (an even share is ${even.toFixed(0)})`);
    }
  }
  return out;
}

/** The median of a figure over the replicas of `among` other than `r` (those that have it). */
function othersMedian(r: ReplicaFigures, among: readonly ReplicaFigures[], pick: (o: ReplicaFigures) => number | undefined): number | undefined {
  const v = among.filter((o) => o !== r).map(pick).filter((x): x is number => x !== undefined);
  return v.length > 0 ? median(v) : undefined;
}

/** `r`'s figure and the others' median where `r`'s exceeds it `factor` times (both known, the others' above 0). */
function skewed(r: ReplicaFigures, among: readonly ReplicaFigures[], pick: (o: ReplicaFigures) => number | undefined, factor: number): { mine: number; rest: number } | undefined {
  const mine = pick(r);
  const rest = othersMedian(r, among, pick);
  return mine !== undefined && rest !== undefined && rest > 0 && mine > factor * rest ? { mine, rest } : undefined;
}

/** Whose doing an uneven load is, and what evens it. */
function splitOf(balance: string | undefined): string {
  if (balance === undefined) return "the router's split";
  if (balance === 'least-inflight') return 'the load itself (least-inflight already sends each request to the replica with the fewest in flight)';
  if (balance === 'session') return "the conversations' split (session keeps each on its replica)";
  return `${balance}'s split (--balance least-inflight sends each request to the replica with the fewest in flight)`;
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}
