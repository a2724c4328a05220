import { basename, dirname } from 'node:path';
import type { ProgressCounters } from '../cli/progress.js';
import { runIdOf } from '../store/run-store.js';
import { HttpFeedSink, LiveFeed, type FeedMeta } from './live-feed.js';
import { readMarker } from './marker.js';
import { spawnDashboard, type SpawnedDashboard } from './spawn-dashboard.js';

export interface LiveLink {
  feed: LiveFeed;
  /** Set when `run --ui` started the dashboard itself. */
  spawned?: SpawnedDashboard;
}

/**
 * A run feeds a dashboard when one serves the folder its run folder is in (`inferbench ui` left a marker there),
 * or, with --ui, one it starts. Without either: no feed, nothing runs.
 */
export async function openLiveFeed(
  args: { outDir: string; ui: boolean; counters: ProgressCounters; meta: Omit<FeedMeta, 'name' | 'dir'> },
  say: (line: string) => void,
  errOut: NodeJS.WritableStream,
): Promise<LiveLink | undefined> {
  const resultsDir = dirname(args.outDir);
  let marker = readMarker(resultsDir);
  let spawned: SpawnedDashboard | undefined;
  if (!marker && args.ui) {
    spawned = await spawnDashboard(resultsDir, errOut);
    marker = spawned.marker;
  }
  if (!marker) return undefined;
  const name = basename(args.outDir);
  const feed = new LiveFeed(new HttpFeedSink(marker.url, marker.token), { ...args.meta, name, dir: args.outDir }, args.counters, (why) =>
    errOut.write(`\nwarning: ${why}\n`),
  );
  say(`live: ${marker.url}#/run/${runIdOf(name)}${spawned ? ' (dashboard started for this run)' : ` (the dashboard serving ${resultsDir})`}`);
  return { feed, ...(spawned ? { spawned } : {}) };
}
