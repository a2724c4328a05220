import { basename, dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ProgressCounters } from './progress-counters.js';
import { runIdOf } from '../store/run-store.js';
import type { LiveStatus } from './client/api-types.js';
import { HttpFeedSink, LiveFeed, type FeedMeta, type FeedState } from './live-feed.js';
import { readMarker, type DashboardMarker } from './marker.js';
import { spawnDashboard, type SpawnedDashboard } from './spawn-dashboard.js';

/** How often a run looks for a dashboard that began serving its folder after the run started. */
export const DASHBOARD_LOOK_MS = 2000;

/** What the run calls as it goes (src/cli/run-command.ts). */
export interface RunFeed {
  stageStarted(index: number, label: string, plannedStages: number): void;
  stageEnded(): void;
  close(status: LiveStatus, exitCode?: number): Promise<void>;
}

export interface LiveLink {
  feed: RunFeed;
  /** Set when `run --ui` started the dashboard itself. */
  spawned?: SpawnedDashboard;
}

/**
 * A run's link to whichever dashboard serves its results folder: the one found at the start, or one started
 * later (`inferbench ui` after `inferbench run`): while none is fed, the marker file is read every 2 s (one small
 * file read, off the measuring path) and the first dashboard found gets the run's state so far (rows done, the
 * row in progress, its clock) and then its progress, as if it had been there from the start. A dashboard that
 * stops answering is let go; a later one is taken up again.
 */
class DashboardLink implements RunFeed {
  private feed: LiveFeed | undefined;
  private readonly state: FeedState = { stageLabels: {}, stagesDone: 0 };
  private readonly timer: NodeJS.Timeout;
  private givenUp = new Set<string>();
  private closed = false;

  constructor(
    private readonly resultsDir: string,
    private readonly meta: FeedMeta,
    private readonly counters: ProgressCounters,
    private readonly warn: (line: string) => void,
    first: DashboardMarker | undefined,
  ) {
    if (first) this.attach(first);
    this.timer = setInterval(() => this.look(), DASHBOARD_LOOK_MS);
    this.timer.unref();
  }

  stageStarted(index: number, label: string, plannedStages: number): void {
    this.state.clockZeroMs ??= performance.now();
    this.state.stage = { index, label, startMs: performance.now() };
    this.state.stageLabels[index] = label;
    this.meta.plannedStages = Math.max(this.meta.plannedStages, plannedStages, index + 1);
    this.feed?.stageStarted(index, label, plannedStages);
  }

  stageEnded(): void {
    this.state.stagesDone++;
    delete this.state.stage;
    this.feed?.stageEnded();
  }

  async close(status: LiveStatus, exitCode?: number): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await this.feed?.close(status, exitCode);
  }

  private look(): void {
    if (this.feed || this.closed) return;
    const marker = readMarker(this.resultsDir);
    if (marker && !this.givenUp.has(marker.token)) this.attach(marker);
  }

  private attach(marker: DashboardMarker): void {
    const feed: LiveFeed = new LiveFeed(
      new HttpFeedSink(marker.url, marker.token),
      { ...this.meta },
      this.counters,
      (why) => {
        this.givenUp.add(marker.token);
        if (this.feed === feed) this.feed = undefined;
        this.warn(why);
      },
      this.state,
    );
    this.feed = feed;
  }
}

/**
 * A run feeds a dashboard when one serves the folder its run folder is in (`inferbench ui` left a marker there,
 * before the run or during it), or, with --ui, one it starts.
 */
export async function openLiveFeed(
  args: { outDir: string; ui: boolean; counters: ProgressCounters; meta: Omit<FeedMeta, 'name' | 'dir'> },
  say: (line: string) => void,
  errOut: NodeJS.WritableStream,
): Promise<LiveLink> {
  const resultsDir = dirname(args.outDir);
  let marker = readMarker(resultsDir);
  let spawned: SpawnedDashboard | undefined;
  if (!marker && args.ui) {
    spawned = await spawnDashboard(resultsDir, errOut);
    marker = spawned.marker;
  }
  const name = basename(args.outDir);
  const feed = new DashboardLink(resultsDir, { ...args.meta, name, dir: args.outDir }, args.counters, (why) => errOut.write(`\nwarning: ${why}\n`), marker);
  if (marker) say(`live: ${marker.url}#/run/${runIdOf(name)}${spawned ? ' (dashboard started for this run)' : ` (the dashboard serving ${resultsDir})`}`);
  return { feed, ...(spawned ? { spawned } : {}) };
}
