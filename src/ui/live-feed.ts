import { request, Agent } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { ProgressCounters } from './progress-counters.js';
import type { LiveStatus } from './client/api-types.js';
import type { FeedBatch } from './feed-types.js';
import { stageNumberText } from '../load/profiles.js';

/** Where batches go: the dashboard's POST /api/live. */
export interface FeedSink {
  /** Resolves false when the dashboard did not take the batch. */
  send(batch: FeedBatch): Promise<boolean>;
  close(): void;
}

export const FEED_INTERVAL_MS = 250;
/** Even with nothing new, a post this often tells the dashboard the run is alive. */
const HEARTBEAT_MS = 2000;

/** POSTs to a dashboard on 127.0.0.1 over one kept-alive connection. */
export class HttpFeedSink implements FeedSink {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1 });
  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  send(batch: FeedBatch): Promise<boolean> {
    const body = JSON.stringify(batch);
    return new Promise((resolve) => {
      const req = request(new URL('api/live', this.url), {
        method: 'POST',
        agent: this.agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-inferbench-token': this.token },
        timeout: 2000,
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode === 204);
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(false));
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Where a run is: what a feed attached mid-run (a dashboard started after the run) starts from. */
export interface FeedState {
  stageLabels: Record<number, string>;
  stage?: { index: number; label: string; startMs: number };
  stagesDone: number;
  clockZeroMs?: number;
}

export interface FeedMeta {
  name: string;
  dir: string;
  model: string;
  engine: string;
  profile: string;
  plannedStages: number;
}

/**
 * The live feed of one run: an observer that reads the progress counters the run already keeps (plain increments
 * on the hot path) every 250 ms and posts them with the row events. Nothing here runs per request, the timer is
 * unref'd, and a post still in flight makes the next tick skip: a slow or dead dashboard never holds the run up.
 */
export class LiveFeed {
  private readonly timer: NodeJS.Timeout;
  private readonly startedAt = new Date().toISOString();
  private readonly stageLabels: Record<number, string> = {};
  private stage: { index: number; label: string; startMs: number } | undefined;
  private stagesDone = 0;
  /** Rows the profile planned before it ran (0: a capacity search, whose probes have no total). */
  private plannedUpFront = 0;
  private clockZeroMs: number | undefined;
  private status: LiveStatus = 'running';
  private exitCode: number | undefined;
  private sending: Promise<boolean> | undefined;
  private lastSent = '';
  private lastSentAt = 0;
  private failures = 0;
  private stopped = false;

  constructor(
    private readonly sink: FeedSink,
    private readonly meta: FeedMeta,
    private readonly counters: ProgressCounters,
    private readonly onGiveUp: (why: string) => void = () => undefined,
    from?: FeedState,
  ) {
    if (from) {
      Object.assign(this.stageLabels, from.stageLabels);
      this.stage = from.stage ? { ...from.stage } : undefined;
      this.stagesDone = from.stagesDone;
      this.clockZeroMs = from.clockZeroMs;
    }
    this.timer = setInterval(() => this.tick(), FEED_INTERVAL_MS);
    this.timer.unref();
    this.tick();
  }

  stageStarted(index: number, label: string, plannedStages: number): void {
    this.clockZeroMs ??= performance.now();
    this.stage = { index, label, startMs: performance.now() };
    this.stageLabels[index] = label;
    this.meta.plannedStages = Math.max(this.meta.plannedStages, plannedStages, index + 1);
    // 0 for a profile that decides its rows one at a time (a capacity search): its rows are probes, with no total.
    this.plannedUpFront = Math.max(this.plannedUpFront, plannedStages);
  }

  /** Call after the row's summary.json is on disk: the dashboard re-reads it when this count grows. */
  stageEnded(): void {
    this.stagesDone++;
    this.stage = undefined;
  }

  /** The last post, awaited (at most ~2 s), then the connection is closed. Safe to call twice. */
  async close(status: LiveStatus, exitCode?: number): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    this.status = status;
    this.exitCode = exitCode;
    if (this.sending) await this.sending;
    if (this.failures < 3) await this.sink.send(this.batch());
    this.sink.close();
  }

  batch(): FeedBatch {
    const c = this.counters;
    const s = this.stage;
    return {
      ...this.meta,
      pid: process.pid,
      status: this.status,
      ...(this.exitCode !== undefined ? { exitCode: this.exitCode } : {}),
      stagesDone: this.stagesDone,
      stageLabels: this.stageLabels,
      ...(s
        ? {
            progress: {
              stage: s.index,
              label: s.label,
              stageNo: stageNumberText(s.index, this.plannedUpFront),
              elapsedS: (performance.now() - s.startMs) / 1000,
              dispatched: c.dispatched,
              done: c.done,
              errors: c.errors,
              inFlight: c.dispatched - c.done,
            },
          }
        : {}),
      ...(this.clockZeroMs !== undefined ? { clockZeroMs: this.clockZeroMs } : {}),
      startedAt: this.startedAt,
    };
  }

  private tick(): void {
    if (this.sending || this.stopped) return;
    const batch = this.batch();
    // Elapsed time changes every tick: compare the rest, and post a heartbeat now and then.
    const key = JSON.stringify({ ...batch, progress: batch.progress ? { ...batch.progress, elapsedS: 0 } : undefined });
    const now = performance.now();
    if (key === this.lastSent && now - this.lastSentAt < HEARTBEAT_MS) return;
    this.lastSent = key;
    this.lastSentAt = now;
    this.sending = this.sink.send(batch).then((ok) => {
      this.sending = undefined;
      this.failures = ok ? 0 : this.failures + 1;
      if (this.failures >= 3 && !this.stopped) {
        this.stopped = true;
        clearInterval(this.timer);
        this.sink.close();
        this.onGiveUp('the dashboard stopped answering; this run is no longer shown live (it is saved as usual)');
      }
      return ok;
    });
  }
}
