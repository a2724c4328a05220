import type { WindowRules } from './window.js';

/**
 * `run --shard I/N`: this process runs segment I of N of one run. Every shard walks the same global schedule
 * (same flags, same seed) and keeps its own part of it, so the union of the shards is the run one process
 * would have sent (k6's execution segments): open loops and bursts keep every N-th arrival (arrival k goes to
 * shard k mod N), closed loops split their streams, trace replays their entries. Request ids are
 * `local × N + I`: unique across shards without any exchange between them.
 */
export interface ShardSpec {
  /** 0-based. */
  index: number;
  count: number;
}

/** This shard's part of `total` things dealt round-robin (streams, a concurrency cap): the first ones get the remainder. */
export function shareOf(total: number, shard: ShardSpec): number {
  if (!Number.isFinite(total)) return total;
  const base = Math.floor(total / shard.count);
  return base + (shard.index < total % shard.count ? 1 : 0);
}

/** Whether global arrival k is this shard's. */
export function ownsArrival(k: number, shard: ShardSpec): boolean {
  return k % shard.count === shard.index;
}

/**
 * The shards that take part in a closed loop of `streams` streams: the first min(streams, N). A count that bounds
 * the row is dealt among them only (one stream over three shards: shard 0 sends every request).
 */
export function closedLoopCountShare(total: number, streams: number, shard: ShardSpec): number {
  const active = Math.min(streams, shard.count);
  return shard.index < active ? shareOf(total, { index: shard.index, count: active }) : 0;
}

/** A shard's window rules: counts that bound the whole row are divided between the shards that take part. */
export function shardWindowRules(rules: WindowRules | undefined, shard: ShardSpec, countShare: (total: number) => number): WindowRules | undefined {
  if (!rules || shard.count === 1) return rules;
  const out: WindowRules = { ...rules, minSamples: Math.max(1, Math.ceil(rules.minSamples / shard.count)) };
  if (rules.measureRequests !== undefined) out.measureRequests = Math.max(1, countShare(rules.measureRequests));
  if (rules.adaptiveCap) {
    const a = rules.adaptiveCap;
    out.adaptiveCap = { ...a, start: Math.max(1, Math.ceil(a.start / shard.count)), max: Math.max(1, Math.ceil(a.max / shard.count)) };
  }
  if (rules.saturationStop) {
    const stop = rules.saturationStop;
    out.saturationStop = { ...stop, minSends: Math.max(5, Math.ceil(stop.minSends / shard.count)) };
    // Each shard holds its part of the row's requests in flight (and of the connections).
    if (stop.maxInFlight !== undefined) out.saturationStop.maxInFlight = Math.max(1, Math.ceil(stop.maxInFlight / shard.count));
  }
  return out;
}

/** Parses `I/N` (0 ≤ I < N). */
export function parseShard(text: string): ShardSpec | undefined {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!m) return undefined;
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || index >= count) return undefined;
  return { index, count };
}
