import { describe, expect, it } from 'vitest';
import { windowRulesFor } from '../../src/load/profiles.js';
import { SteadyWindow } from '../../src/load/window.js';

/**
 * The throughput row's in-flight cap search (window.ts) driven the way the drivers drive it — send while fewer than
 * the cap are in flight, poll every 50 ms — against servers of known behaviour in virtual time (ms).
 */
interface Job {
  sentAt: number;
  /** Work left, ms at full speed. */
  left: number;
  startedAt?: number;
  ttft?: number;
  /** Streaming span (first → last token), for servers that stream. */
  firstToken?: number;
  lastToken?: number;
}

/** A server: accepts requests, says when the next one finishes, and finishes it. */
interface FakeServer {
  add(job: Job, now: number): void;
  nextEnd(now: number): number;
  finish(now: number): Job[];
}

/**
 * llama.cpp-like: `slots` slots served in arrival order, each request takes `serviceMs` once it has a slot, its first
 * token `prefillMs` after it got one — `loadedPrefillMs` when other slots were busy (a prompt evaluated beside their
 * decoding, as on one CPU thread). `streams`: its requests report their first and last token times.
 */
function slotServer(slots: number, serviceMs: number, prefillMs: number, opts: { loadedPrefillMs?: number; streams?: boolean } = {}): FakeServer {
  const queue: Job[] = [];
  const running: Array<Job & { endAt: number }> = [];
  const admit = (now: number): void => {
    while (running.length < slots && queue.length > 0) {
      const j = queue.shift() as Job;
      j.startedAt = now;
      const prefill = running.length > 0 ? (opts.loadedPrefillMs ?? prefillMs) : prefillMs;
      j.ttft = now - j.sentAt + prefill;
      if (opts.streams) Object.assign(j, { firstToken: now + prefill, lastToken: now + serviceMs });
      running.push({ ...j, endAt: now + serviceMs });
    }
  };
  return {
    add: (job, now) => {
      queue.push(job);
      admit(now);
    },
    nextEnd: () => Math.min(...running.map((j) => j.endAt)),
    finish: (now) => {
      const done = running.filter((j) => j.endAt <= now);
      for (const d of done) running.splice(running.indexOf(d), 1);
      admit(now);
      return done;
    },
  };
}

/** Continuous batching that admits everything: each of n requests runs at min(1, slots / n) of full speed. */
function sharingServer(slots: number, serviceMs: number): FakeServer {
  const jobs: Job[] = [];
  let at = 0;
  const speed = (): number => Math.min(1, slots / Math.max(1, jobs.length));
  const advance = (now: number): void => {
    const s = speed();
    for (const j of jobs) j.left -= (now - at) * s;
    at = now;
  };
  return {
    add: (job, now) => {
      advance(now);
      job.ttft = 5;
      jobs.push(job);
    },
    nextEnd: (now) => (jobs.length === 0 ? Infinity : now + Math.min(...jobs.map((j) => j.left)) / speed()),
    finish: (now) => {
      advance(now);
      const done = jobs.filter((j) => j.left <= 1e-6);
      for (const d of done) jobs.splice(jobs.indexOf(d), 1);
      return done;
    },
  };
}

/** Runs one throughput row (--max-seconds `seconds`); returns the window's outcome and the in-flight counts it saw. */
function runThroughputRow(server: FakeServer, serviceMs: number, seconds: number) {
  const w = new SteadyWindow(windowRulesFor('burst', { maxSeconds: seconds }), 0, Infinity);
  let now = 0;
  let inFlight = 0;
  let inFlightAtOpen: number | undefined;
  let area = 0;
  let maxInWindow = 0;
  let last = 0;
  const account = (t: number): void => {
    const o = w.outcome(t);
    // The window is open between openAtMs and now (outcome() reports an unopened window as opening at t).
    if (!w.closed && o.openAtMs !== null && o.openAtMs < t) {
      inFlightAtOpen ??= inFlight;
      area += inFlight * (t - Math.max(last, o.openAtMs));
      maxInWindow = Math.max(maxInWindow, inFlight);
    }
    last = t;
  };
  for (let guard = 0; guard < 1_000_000; guard++) {
    while (w.sending(now) && inFlight < w.inFlightCap()) {
      account(now);
      w.onSend(now);
      server.add({ sentAt: now, left: serviceMs }, now);
      inFlight++;
    }
    if (w.closed && inFlight === 0) break;
    // The driver polls every 50 ms even when nothing happens.
    const next = Math.min(server.nextEnd(now), now + 50);
    account(next);
    now = next;
    for (const j of server.finish(now)) {
      inFlight--;
      const span = j.firstToken !== undefined ? { firstTokenAtMs: j.firstToken, lastTokenAtMs: j.lastToken as number } : {};
      w.onComplete({ sentAtMs: j.sentAt, endAtMs: now, status: 'ok', ttftMs: j.ttft as number, ...span });
    }
  }
  const outcome = w.outcome(now);
  const length = (outcome.closeAtMs as number) - (outcome.openAtMs as number);
  return { outcome, inFlightAtOpen, meanInFlight: area / length, maxInWindow };
}

describe('throughput row: the in-flight cap search', () => {
  it('a 4-slot server (12 s per request): the step rate comes from settled requests, the search goes down to the 4 slots, and the window measures the cap it reports', () => {
    // 4 slots / 12 s = 0.333 req/s whatever is in flight; requests beyond 4 queue at the server.
    const { outcome, inFlightAtOpen, meanInFlight, maxInWindow } = runThroughputRow(slotServer(4, 12_000, 700), 12_000, 5);
    const search = outcome.capSearch!;
    // The first step's rate is the server's, not that of the first (never-queued) completions: 0.95 vs 0.34 on main.
    expect(search.steps[0]!.cap).toBe(16);
    expect(search.steps[0]!.completionRate).toBeGreaterThan(0.3);
    expect(search.steps[0]!.completionRate).toBeLessThan(0.37);
    // Its settled requests waited at the server for most of their latency: 12 of the 16 were queued there. The
    // server served 4 at once (no token times: Little's law on the time not spent waiting, 0.333 req/s × 12 s).
    expect(search.steps[0]).toMatchObject({ queued: true, servingAtOnce: 4 });
    // Down to 4, which kept the rate: the cap stays (it stayed at 16, a 12-deep queue, before).
    expect(search.steps.map((s) => s.cap)).toEqual([16, 4]);
    expect(search.steps[1]!.completionRate).toBeCloseTo(search.steps[0]!.completionRate, 2);
    expect(search.steps[1]!.queued).toBeUndefined();
    expect(search.cap).toBe(4);
    // What the window measured is what the row reports.
    expect(inFlightAtOpen).toBe(4);
    expect(maxInWindow).toBe(4);
    expect(meanInFlight).toBeGreaterThan(3.9);
    expect(search.measuredInFlight?.max).toBe(4);
    expect(search.measuredInFlight!.mean).toBeCloseTo(meanInFlight, 6);
    expect(outcome.unsettled).toBeUndefined();
  });

  it('a 4-slot server whose prompts run slower beside busy slots: the streams it served at once say 4, where the wait alone said 3', () => {
    // A prompt takes 0.7 s alone and 3 s beside the other slots' decoding: the first token's delay beyond the
    // quickest is not all queueing, so rate × (latency − wait) = 0.333 × (12 − 2.3) ≈ 3. The streams (first → last
    // token) of 4 slots overlap 4 at once.
    const waitOnly = runThroughputRow(slotServer(4, 12_000, 700, { loadedPrefillMs: 3000 }), 12_000, 5).outcome.capSearch!;
    expect(waitOnly.steps[0]).toMatchObject({ cap: 16, queued: true, servingAtOnce: 3 });
    const { outcome, maxInWindow } = runThroughputRow(slotServer(4, 12_000, 700, { loadedPrefillMs: 3000, streams: true }), 12_000, 5);
    const search = outcome.capSearch!;
    expect(search.steps[0]).toMatchObject({ cap: 16, queued: true, servingAtOnce: 4 });
    expect(search.steps.map((s) => s.cap)).toEqual([16, 4]);
    expect(search.cap).toBe(4);
    expect(maxInWindow).toBe(4);
    expect(outcome.unsettled).toBeUndefined();
  });

  it('going back to a lower cap: the window opens only once the higher step\'s queue has drained to that cap', () => {
    // 20 requests at full speed (1 s each): 16 → 16 req/s, 64 → 20 req/s (+25%: on), 256 → 20 req/s (no gain: back to 64).
    const { outcome, inFlightAtOpen, meanInFlight, maxInWindow } = runThroughputRow(sharingServer(20, 1000), 1000, 5);
    const search = outcome.capSearch!;
    expect(search.steps.map((s) => s.cap)).toEqual([16, 64, 256]);
    expect(search.steps[0]!.completionRate).toBeCloseTo(16, 1);
    expect(search.steps[1]!.completionRate).toBeCloseTo(20, 1);
    expect(search.steps[2]!.completionRate).toBeCloseTo(20, 1);
    expect(search.cap).toBe(64);
    expect(inFlightAtOpen).toBeLessThanOrEqual(64);
    expect(maxInWindow).toBe(64);
    expect(meanInFlight).toBeGreaterThan(60);
    expect(search.measuredInFlight).toEqual({ mean: expect.closeTo(meanInFlight, 6), max: 64 });
  });
});
