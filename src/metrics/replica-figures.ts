/**
 * Per-replica figures of a row (issue 34): the measured requests each replica served, folded in as records finish
 * (the row's StageAccumulator feeds it only records that carry `replica`), and the lines that name a replica markedly
 * slower, busier or down compared with the rest.
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
/** Fewer successes than this on a replica say nothing about its speed. */
const MIN_OK_FOR_SPEED = 5;

export class ReplicaTally {
  private readonly byIndex = new Map<number, Tally>();

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

  /** Every replica seen, by index; `durationS` is the row's window length (its throughput's division). */
  figures(durationS: number): ReplicaFigures[] {
    return [...this.byIndex.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([index, t]) => {
        const ttft = computeStats(t.ttft);
        const itl = computeStats(t.itl);
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
 * The lines under a row: a replica down; a replica whose TTFT or ITL median is REPLICA_SKEW_FACTOR× the median of
 * the others'; a replica that served REPLICA_SKEW_FACTOR× its even share of the row's requests.
 */
export function replicaWarnings(list: readonly ReplicaFigures[]): string[] {
  const out: string[] = [];
  for (const r of list) if (r.down) out.push(`${replicaLabel(r)} went down ${r.down.atS.toFixed(1)} s into the row (${r.down.error}); the others carried the rest`);
  if (list.length < 2) return out;
  for (const metric of ['ttftMs', 'itlMs'] as const) {
    const speed = list.filter((r) => r.ok >= MIN_OK_FOR_SPEED && r[metric] !== undefined);
    for (const r of speed) {
      const others = speed.filter((o) => o !== r).map((o) => o[metric]?.p50 as number);
      if (others.length === 0) continue;
      const rest = median(others);
      const mine = r[metric]?.p50 as number;
      if (rest > 0 && mine > REPLICA_SKEW_FACTOR * rest) {
        out.push(`${replicaLabel(r)} is slower: ${metric === 'ttftMs' ? 'TTFT' : 'ITL'} p50 ${mine.toFixed(1)} ms vs ${rest.toFixed(1)} ms on the others`);
      }
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

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}
