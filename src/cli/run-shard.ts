/**
 * Before the first row of a run with --start-at or --shard: wait for the instant, and say which part of the run
 * this process sends. Returns what the summary records about the shard.
 */
import { resolve } from 'node:path';
import { epochOrigin, waitUntilWallClock, type ShardInfo } from '../distributed/shard-run.js';
import type { RunPlan } from '../runplan/schema.js';

export async function startShard(plan: RunPlan, runKey: string | undefined, say: (line: string) => void, notes: string[], signal: AbortSignal): Promise<ShardInfo | undefined> {
  const { startAt, shard, barrier } = plan.distribution;
  if (startAt !== undefined) {
    const late = Date.now() - startAt;
    say(late > 0 ? `start-at ${new Date(startAt).toISOString()} passed ${(late / 1000).toFixed(1)} s ago: starting now` : `waiting for --start-at ${new Date(startAt).toISOString()} (${(-late / 1000).toFixed(1)} s)`);
    await waitUntilWallClock(startAt, signal);
  }
  if (!shard) return undefined;
  const origin = epochOrigin();
  const startedAt = origin + performance.now();
  const info: ShardInfo = {
    index: shard.index,
    count: shard.count,
    runKey: runKey as string,
    seed: plan.workload.seed,
    ...(startAt !== undefined ? { startAt: new Date(startAt).toISOString(), startOffsetMs: startedAt - startAt } : {}),
    startedAt: new Date(startedAt).toISOString(),
    ...(barrier ? { barrier: resolve(barrier) } : {}),
    epochOriginMs: origin,
  };
  if (!barrier && plan.load.plannedRows > 1) {
    say(`note: rows after the first start when this shard finishes the row before, not with the other shards: pass --barrier DIR (a folder every shard can write) so every row starts together`);
  }
  notes.push(`shard ${shard.index}/${shard.count}: each row holds this shard's part of the load (every ${shard.count}th arrival of an open loop, its share of the streams); inferbench merge joins the shards into the whole run`);
  say(`shard ${shard.index}/${shard.count}: this process sends its part of the run${info.startOffsetMs !== undefined ? ` (started ${info.startOffsetMs.toFixed(1)} ms after --start-at)` : ''}; inferbench merge joins the shards' folders`);
  return info;
}
