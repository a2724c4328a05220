import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LiveMessage } from '../../src/ui/client/api-types.js';
import type { FeedBatch } from '../../src/ui/feed-types.js';
import { FEED_INTERVAL_MS, LiveFeed, type FeedSink } from '../../src/ui/live-feed.js';
import { LiveHub } from '../../src/ui/live-hub.js';
import { RequestsTail } from '../../src/ui/requests-tail.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const meta = { name: '20991231-000000-x', dir: '/nowhere', model: 'm', engine: 'e', profile: 'constant', plannedStages: 2 };

/** A dashboard stand-in: records every batch, answers after `delayMs`, counts posts in flight at once. */
function recordingSink(delayMs: number, answer = true): FeedSink & { batches: FeedBatch[]; mostInFlight: number; closed: boolean } {
  let inFlight = 0;
  const sink = {
    batches: [] as FeedBatch[],
    mostInFlight: 0,
    closed: false,
    async send(b: FeedBatch) {
      inFlight++;
      sink.mostInFlight = Math.max(sink.mostInFlight, inFlight);
      sink.batches.push(structuredClone(b));
      await sleep(delayMs);
      inFlight--;
      return answer;
    },
    close() {
      sink.closed = true;
    },
  };
  return sink;
}

describe('the run-side live feed', () => {
  it('batches: however fast the counters move, one post per tick at most, never two at once, the last one final', async () => {
    const sink = recordingSink(5);
    const counters = { dispatched: 0, done: 0, errors: 0 };
    const feed = new LiveFeed(sink, { ...meta }, counters);
    feed.stageStarted(0, 'asynchronous@20.00 req/sec', 2);
    const started = performance.now();
    // The measuring loop bumping counters as fast as it can for a while.
    while (performance.now() - started < 1000) {
      counters.dispatched++;
      if (counters.dispatched % 2 === 0) counters.done++;
      await new Promise((r) => setImmediate(r));
    }
    feed.stageEnded();
    await feed.close('finished', 0);
    const elapsed = performance.now() - started;
    // One initial post, at most one per tick after, and the closing one.
    expect(sink.batches.length).toBeLessThanOrEqual(Math.ceil(elapsed / FEED_INTERVAL_MS) + 2);
    expect(sink.batches.length).toBeGreaterThanOrEqual(3);
    expect(sink.mostInFlight).toBe(1);
    const running = sink.batches.find((b) => b.progress);
    expect(running?.progress).toMatchObject({ stage: 0, label: 'asynchronous@20.00 req/sec', stageNo: '1/2' });
    expect(running?.progress?.inFlight).toBe((running?.progress?.dispatched ?? 0) - (running?.progress?.done ?? 0));
    expect(sink.batches.at(-1)).toMatchObject({ status: 'finished', exitCode: 0, stagesDone: 1, stageLabels: { 0: 'asynchronous@20.00 req/sec' } });
    expect(sink.closed).toBe(true);
  });

  it('a capacity search\'s rows are probes without a made-up total ("probe 3", not "3/3")', async () => {
    const sink = recordingSink(0);
    const feed = new LiveFeed(sink, { ...meta, profile: 'capacity', plannedStages: 0 }, { dispatched: 0, done: 0, errors: 0 });
    for (const i of [0, 1, 2]) {
      feed.stageStarted(i, `probe ${i}`, 0);
      if (i < 2) feed.stageEnded();
    }
    await feed.close('finished', 0);
    const last = sink.batches.filter((b) => b.progress).at(-1);
    expect(last?.progress?.stageNo).toBe('probe 3');
  });

  it('skips ticks while a post is slow instead of queueing them', async () => {
    const sink = recordingSink(700);
    const counters = { dispatched: 0, done: 0, errors: 0 };
    const feed = new LiveFeed(sink, { ...meta }, counters);
    feed.stageStarted(0, 'row', 1);
    const t = setInterval(() => counters.done++, 5);
    await sleep(1500);
    clearInterval(t);
    await feed.close('finished', 0);
    expect(sink.mostInFlight).toBe(1);
    // 1.5 s of 700 ms posts: a handful, not 1500 / 250.
    expect(sink.batches.length).toBeLessThanOrEqual(5);
  });

  it('gives up on a dashboard that stops answering, says so once, and posts no more', async () => {
    const sink = recordingSink(1, false);
    const counters = { dispatched: 0, done: 0, errors: 0 };
    const said: string[] = [];
    const feed = new LiveFeed(sink, { ...meta }, counters, (why) => said.push(why));
    feed.stageStarted(0, 'row', 1);
    const t = setInterval(() => counters.done++, 5);
    await sleep(FEED_INTERVAL_MS * 6);
    clearInterval(t);
    expect(sink.batches).toHaveLength(3);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/no longer shown live/);
    await feed.close('finished', 0);
    expect(sink.batches).toHaveLength(3);
  });
});

describe('the dashboard side: requests.jsonl tail and the hub', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  const rec = (id: number, stage: number, extra: object): string =>
    JSON.stringify({ schemaVersion: 1, id, stage, warmup: false, status: 'ok', sentAtMs: 1000 + id * 10, ttftMs: 20 + id, ...extra });

  it('returns only complete lines, each once, and skips warm-up requests', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ib-tail-'));
    const file = join(dir, 'requests.jsonl');
    const tail = new RequestsTail(dir);
    expect(await tail.next()).toEqual([]);
    const second = rec(2, 0, {});
    writeFileSync(file, `${rec(1, 0, {})}\n${rec(9, 0, { warmup: true })}\n${second.slice(0, 20)}`);
    expect((await tail.next()).map((r) => r.ttftMs)).toEqual([21]);
    appendFileSync(file, `${second.slice(20)}\n${rec(3, 1, { status: 'error', error: { code: 'E_HTTP_STATUS', message: 'HTTP 500 <b>' } })}\n`);
    const next = await tail.next();
    expect(next).toEqual([{ ok: true, stage: 0, sentAtMs: 1020, ttftMs: 22 }, { ok: false, stage: 1, error: 'E_HTTP_STATUS: HTTP 500 <b>' }]);
    expect(await tail.next()).toEqual([]);
  });

  it('turns posts into live messages: points on the run clock, failures, finished rows', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ib-hub-'));
    const hub = new LiveHub();
    const messages: LiveMessage[] = [];
    const sent: string[] = [];
    // An SSE client stand-in: the hub writes frames to it.
    const fake = { writeHead: () => fake, write: (s: string) => void sent.push(s), on: () => fake, end: () => undefined };
    hub.addClient(fake as never);
    const base: FeedBatch = { ...meta, dir, pid: process.pid, status: 'running', stagesDone: 0, stageLabels: { 0: 'row A' }, clockZeroMs: 1000, startedAt: '2099-12-31T00:00:00.000Z' };
    writeFileSync(join(dir, 'requests.jsonl'), `${rec(1, 0, {})}\n${rec(2, 0, { status: 'error', error: { code: 'E_RESET', message: 'reset' } })}\n`);
    await hub.accept(base);
    appendFileSync(join(dir, 'requests.jsonl'), `${rec(3, 1, {})}\n`);
    await hub.accept({ ...base, stagesDone: 1, stageLabels: { 0: 'row A', 1: 'row B' } });
    for (const frame of sent.filter((f) => f.startsWith('event: live'))) messages.push(JSON.parse(frame.split('data: ')[1] as string) as LiveMessage);
    expect(messages).toHaveLength(2);
    expect(messages[0]?.points).toEqual([{ t: 0.01, ttftMs: 21, row: 'row A', order: 0 }]);
    expect(messages[0]?.run.recentErrors).toEqual(['E_RESET: reset']);
    expect(messages[0]?.rowEnded).toBe(false);
    expect(messages[1]?.points).toEqual([{ t: 0.03, ttftMs: 23, row: 'row B', order: 1 }]);
    expect(messages[1]?.rowEnded).toBe(true);
    expect(hub.snapshot(messages[0]?.run.id as string)?.points).toHaveLength(2);
    hub.close();
  });
});
