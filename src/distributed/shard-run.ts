import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { sleepUntil } from '../core/clock.js';

export type { ShardInfo } from '../results/run-summary.js';

/** Options that do not change what is sent: they may differ between the shards of one run. */
const PER_SHARD = new Set(['shard', 'out', 'startAt', 'progress', 'json', 'formats', 'apiKey', 'resume', 'columns', 'workers', 'barrier']);

/** A hash of the options that change what is sent (any options object: config's RunOptions in practice). */
export function runKeyOf(opts: object): string {
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
