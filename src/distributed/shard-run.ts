import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { RunOptions } from '../config/run-options.js';
import { sleepUntil } from '../core/clock.js';

/** What a shard records about itself (manifest.json and summary.json `shard`), and what merge checks. */
export interface ShardInfo {
  index: number;
  count: number;
  /** Hash of every option that shapes the load (not --shard, --out, --start-at, output styles): equal on every shard of one run. */
  runKey: string;
  seed: number;
  /** The instant every shard was told to start (ISO-8601), when --start-at was given. */
  startAt?: string;
  /** When this shard actually started its first row (ISO-8601, its own wall clock). */
  startedAt: string;
  /** startedAt − startAt, ms: how late this shard started (image pull, a slow node). */
  startOffsetMs?: number;
  /** `--barrier`: the folder the shards met in before every row. */
  barrier?: string;
  /** Wall clock (epoch ms) at this process's performance.now() = 0: merge puts every shard's stamps on one time line. */
  epochOriginMs: number;
}

/** Options that do not change what is sent: they may differ between the shards of one run. */
const PER_SHARD = new Set(['shard', 'out', 'startAt', 'progress', 'json', 'formats', 'apiKey', 'resume', 'columns', 'workers', 'barrier']);

export function runKeyOf(opts: RunOptions): string {
  const kept = Object.entries(opts)
    .filter(([k, v]) => !PER_SHARD.has(k) && v !== undefined)
    .sort(([a], [b]) => a.localeCompare(b));
  return createHash('sha256').update(JSON.stringify(kept)).digest('hex').slice(0, 16);
}

/** Wall clock at performance.now() = 0, from the tightest of several paired reads. */
export function epochOrigin(): number {
  let best = Infinity;
  let origin = 0;
  for (let i = 0; i < 50; i++) {
    const a = performance.now();
    const wall = Date.now();
    const b = performance.now();
    if (b - a < best) {
      best = b - a;
      // Date.now() has ms resolution: the midpoint is as good as it gets.
      origin = wall - (a + b) / 2;
    }
  }
  return origin;
}

/** Waits for the wall-clock instant `at` (epoch ms), on the monotonic clock (sub-ms); at once if it has passed. */
export async function waitUntilWallClock(at: number, signal?: AbortSignal): Promise<void> {
  await sleepUntil(at - epochOrigin(), signal);
}
