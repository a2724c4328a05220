import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InferbenchError } from '../core/errors.js';
import type { ShardSpec } from '../load/shard.js';
import { waitUntilWallClock } from './shard-run.js';

/**
 * `run --shard I/N --barrier DIR`: the shards of one run start every row together through a folder they can all
 * write (a shared volume: a ReadWriteMany claim in Kubernetes). Before row k each shard writes `row-k/shard-I`
 * holding its wall-clock time and polls until all N are there; every shard then reads the same N files and starts
 * at the same instant: the latest arrival + `marginMs` (time for the slowest poller to see the last file).
 * Without it, rows after the first start whenever each shard finished the row before.
 */
export interface BarrierOptions {
  dir: string;
  shard: ShardSpec;
  /** Names the meeting: the run's key (shard-run.ts runKeyOf) and its --start-at, so two runs sharing one folder never meet. */
  meeting: string;
  pollMs?: number;
  marginMs?: number;
  timeoutMs?: number;
}

export const BARRIER_MARGIN_MS = 500;
const POLL_MS = 50;
const TIMEOUT_MS = 15 * 60_000;

/** Waits for every shard at row `row`, then until their common start; returns that start (epoch ms). */
export async function meetAtRow(row: number, o: BarrierOptions, signal?: AbortSignal): Promise<{ startAtMs: number; waitedMs: number }> {
  const t0 = Date.now();
  const folder = join(o.dir, o.meeting, `row-${row}`);
  mkdirSync(folder, { recursive: true });
  const mine = join(folder, `shard-${o.shard.index}`);
  if (existsSync(mine)) {
    throw new InferbenchError('E_CONFIG', `the barrier folder ${o.dir} already holds shard ${o.shard.index}'s mark for row ${row + 1} from an earlier attempt of this run`, {
      hint: 'give every attempt a new --barrier folder (or a new --start-at, which names the meeting)',
    });
  }
  // Written whole (temp file + rename): a poller never reads half a time.
  writeFileSync(`${mine}.tmp`, String(Date.now()));
  renameSync(`${mine}.tmp`, mine);
  const deadline = t0 + (o.timeoutMs ?? TIMEOUT_MS);
  for (;;) {
    if (signal?.aborted) return { startAtMs: Date.now(), waitedMs: Date.now() - t0 };
    const arrived = readdirSync(folder).filter((f) => /^shard-\d+$/.test(f));
    if (arrived.length >= o.shard.count) {
      const latest = Math.max(...arrived.map((f) => Number(readFileSync(join(folder, f), 'utf8'))));
      const startAtMs = latest + (o.marginMs ?? BARRIER_MARGIN_MS);
      await waitUntilWallClock(startAtMs, signal);
      return { startAtMs, waitedMs: Date.now() - t0 };
    }
    if (Date.now() > deadline) {
      const have = new Set(arrived.map((f) => Number(f.slice(6))));
      const missing = Array.from({ length: o.shard.count }, (_, i) => i).filter((i) => !have.has(i));
      throw new InferbenchError('E_CONFIG', `shard${missing.length > 1 ? 's' : ''} ${missing.map((i) => `${i}/${o.shard.count}`).join(', ')} did not reach row ${row + 1} in ${Math.round((Date.now() - t0) / 1000)} s (barrier ${folder})`, {
        hint: 'check that every shard runs with the same flags and the same --barrier folder on a shared volume',
      });
    }
    await new Promise((r) => setTimeout(r, o.pollMs ?? POLL_MS));
  }
}
