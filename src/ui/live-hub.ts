import type { ServerResponse } from 'node:http';
import { runIdOf } from '../store/run-store.js';
import type { LiveMessage, LivePoint, LiveRun, LiveSnapshot, LiveStatus } from './client/api-types.js';
import type { FeedBatch } from './feed-types.js';
import { pidAlive } from './marker.js';
import { RequestsTail } from './requests-tail.js';
import { ttftScatter } from './ui-charts.js';

/** Points kept per live run; past that every second one is dropped and only every second new one is kept. */
const POINT_LIMIT = 4000;
const RECENT_ERRORS = 20;
/** A running run silent this long whose process is gone is marked lost. */
const SILENCE_MS = 8000;
const KEEP_ENDED = 50;

interface Entry {
  run: LiveRun;
  dir: string;
  pid: number;
  clockZeroMs?: number;
  stageLabels: Record<number, string>;
  points: LivePoint[];
  stride: number;
  offered: number;
  tail: RequestsTail;
  /** Feed posts are applied one after another (each tails the file). */
  chain: Promise<void>;
  lastSeen: number;
}

/**
 * The dashboard's side of the live feed: the state of each run that posts to it, new per-request points read from
 * the run's own requests.jsonl, and the server-sent-event stream every open page listens to.
 */
export class LiveHub {
  private readonly entries = new Map<string, Entry>();
  private readonly clients = new Set<ServerResponse>();
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.timer = setInterval(() => this.sweep(), 2000);
    this.timer.unref();
  }

  /** A post from a running `inferbench run`. Resolves once its points are read and pushed to every page. */
  accept(batch: FeedBatch): Promise<void> {
    let entry = this.entries.get(batch.name);
    if (!entry || entry.pid !== batch.pid) {
      entry = {
        run: {
          id: runIdOf(batch.name), name: batch.name, status: 'running', model: '', engine: '', profile: '', plannedStages: 0, stagesDone: 0,
          recentErrors: [], startedAt: batch.startedAt, updatedAt: '',
        },
        dir: batch.dir,
        pid: batch.pid,
        stageLabels: {},
        points: [],
        stride: 1,
        offered: 0,
        tail: new RequestsTail(batch.dir),
        chain: Promise.resolve(),
        lastSeen: Date.now(),
      };
      this.entries.set(batch.name, entry);
      this.trim();
    }
    const e = entry;
    e.chain = e.chain.then(() => this.apply(e, batch)).catch(() => undefined);
    return e.chain;
  }

  list(): LiveRun[] {
    return [...this.entries.values()].map((e) => e.run);
  }

  byName(name: string): LiveRun | undefined {
    return this.entries.get(name)?.run;
  }

  snapshot(id: string): LiveSnapshot | undefined {
    const e = [...this.entries.values()].find((x) => x.run.id === id);
    return e ? { run: e.run, points: e.points, chart: ttftScatter(e.points, `${e.run.model} — each successful measured request as the run writes it`) } : undefined;
  }

  /** An SSE stream: `live` events as runs progress, `runs` when the results folder changed. */
  addClient(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
    res.write('retry: 2000\n\n');
    this.clients.add(res);
    res.on('close', () => this.clients.delete(res));
  }

  get clientCount(): number {
    return this.clients.size;
  }

  broadcast(event: string, data: unknown): void {
    const frame = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const res of this.clients) res.write(frame);
  }

  /** Comments keep proxies and browsers from timing the stream out. */
  ping(): void {
    for (const res of this.clients) res.write(': ping\n\n');
  }

  close(): void {
    clearInterval(this.timer);
    for (const res of this.clients) res.end();
    this.clients.clear();
  }

  private async apply(e: Entry, b: FeedBatch): Promise<void> {
    const rowEnded = b.stagesDone > e.run.stagesDone;
    Object.assign(e.stageLabels, b.stageLabels);
    if (b.clockZeroMs !== undefined) e.clockZeroMs = b.clockZeroMs;
    e.lastSeen = Date.now();
    const added: LivePoint[] = [];
    for (const r of await e.tail.next()) {
      if (!r.ok) {
        if (r.error) e.run.recentErrors = [...e.run.recentErrors, r.error].slice(-RECENT_ERRORS);
        continue;
      }
      if (r.sentAtMs === undefined || r.ttftMs === undefined) continue;
      if (e.offered++ % e.stride !== 0) continue;
      const p: LivePoint = { t: (r.sentAtMs - (e.clockZeroMs ?? r.sentAtMs)) / 1000, ttftMs: r.ttftMs, row: e.stageLabels[r.stage] ?? `row ${r.stage + 1}`, order: r.stage };
      e.points.push(p);
      added.push(p);
    }
    if (e.points.length > POINT_LIMIT) {
      e.points = e.points.filter((_, i) => i % 2 === 0);
      e.stride *= 2;
    }
    e.run = {
      ...e.run,
      status: b.status,
      ...(b.exitCode !== undefined ? { exitCode: b.exitCode } : {}),
      model: b.model,
      engine: b.engine,
      profile: b.profile,
      plannedStages: b.plannedStages,
      stagesDone: b.stagesDone,
      startedAt: b.startedAt,
      updatedAt: new Date().toISOString(),
    };
    if (b.progress) e.run.progress = b.progress;
    else delete e.run.progress;
    const message: LiveMessage = { run: e.run, points: added, rowEnded };
    this.broadcast('live', message);
  }

  /** Runs that went silent with their process gone (killed, crashed) are marked lost. */
  private sweep(): void {
    for (const e of this.entries.values()) {
      if (e.run.status !== 'running' || Date.now() - e.lastSeen < SILENCE_MS || pidAlive(e.pid)) continue;
      e.run = { ...e.run, status: 'lost' as LiveStatus, updatedAt: new Date().toISOString() };
      delete e.run.progress;
      this.broadcast('live', { run: e.run, points: [], rowEnded: false } satisfies LiveMessage);
    }
  }

  private trim(): void {
    const ended = [...this.entries.entries()].filter(([, e]) => e.run.status !== 'running');
    for (const [name] of ended.slice(0, Math.max(0, ended.length - KEEP_ENDED))) this.entries.delete(name);
  }
}
