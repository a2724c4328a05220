import { describe, expect, it } from 'vitest';
import { InFlightCapSearch } from '../../../src/load/window/cap-search.js';

const rule = { start: 16, growth: 4, minGain: 0.15, max: 256 };
const ok = (sentAtMs: number, endAtMs: number, ttftMs?: number) => ({ sentAtMs, endAtMs, status: 'ok' as const, ...(ttftMs !== undefined ? { ttftMs } : {}) });

/** Runs one step at `cap` requests in flight, each `latencyMs` long, from `t`; returns when the next step starts. */
function round(s: InFlightCapSearch, t: number, latencyMs: number, ttftMs?: number): number {
  // The step's first completion settles it; the next `cap` requests, sent then, are its settled ones.
  s.onComplete(ok(t, t + latencyMs, ttftMs));
  const settled = t + latencyMs;
  for (let i = 0; i < s.cap; i++) s.onComplete(ok(settled, settled + latencyMs, ttftMs));
  return settled + latencyMs;
}

describe('InFlightCapSearch', () => {
  it('without an adaptive rule the cap is fixed and settled', () => {
    const s = new InFlightCapSearch(undefined, 0, 32);
    expect([s.cap, s.settled, s.step(10_000, 32)]).toEqual([32, true, undefined]);
  });

  it('grows ×growth while the rate gains minGain, then keeps a cap that still gained half of it', () => {
    const s = new InFlightCapSearch(rule, 0, Infinity);
    let t = round(s, 0, 1000); // 16 in flight, 1 s: 16 req/s
    expect(s.step(t, 16)).toBeUndefined();
    expect(s.cap).toBe(64);
    t = round(s, t, 1000 * (64 / 18)); // 18 req/s: +12.5%, under 15% but over 7.5%: kept
    expect(s.step(t, 64)).toBe('kept');
    expect([s.cap, s.settled]).toEqual([64, true]);
    expect(s.steps.map((x) => [x.cap, Math.round(x.completionRate)])).toEqual([[16, 16], [64, 18]]);
  });

  it('goes back to the previous cap when a step gained under half of minGain, with time for the queue to drain', () => {
    const s = new InFlightCapSearch(rule, 0, Infinity);
    let t = round(s, 0, 1000);
    s.step(t, 16);
    t = round(s, t, 1000 * (64 / 16.5)); // +3%: back to 16
    expect(s.step(t, 64)).toBe('backed-off');
    expect(s.cap).toBe(16);
    // The 64 in flight drain at 16 req/s, then one latency at the cap, ×2: (2000 × 64) / 16 ms past now.
    expect(s.backOffLimitMs).toBeCloseTo(t + (2000 * 64) / 16, 6);
  });

  it('a step whose requests queued at the server (first token over half their latency beyond the quickest) goes down to what the server served at once, and stays there when it keeps the rate', () => {
    const s = new InFlightCapSearch(rule, 0, Infinity);
    s.onComplete(ok(0, 100, 10)); // the row's quickest first token: 10 ms
    let t = round(s, 0, 1000, 20); // 16 in flight, 1 s each: 16 req/s
    s.step(t, 16);
    // A server serving 20 at once, 1 s each: 64 in flight take 3.2 s, of which 2.2 s waiting (first token at 2.21 s).
    t = round(s, t, 3200, 2210);
    expect(s.step(t, 64)).toBeUndefined();
    // 20 req/s × (3.2 s − 2.2 s waited) = 20 served at once: the search goes on at 20 (it kept 64 before).
    expect(s.steps[1]).toMatchObject({ cap: 64, queued: true, servingAtOnce: 20 });
    expect(s.steps[1]!.completionRate).toBeCloseTo(20, 6);
    expect([s.cap, s.settled]).toEqual([20, false]);
    // The 44 in flight beyond 20 drain first: 1.5 × (44 + 2 × 20 + 10) requests at 20 req/s past the step's start.
    expect(s.rampLimitMs(0, { completed: 0, firstCompletionAt: null, lastCompletionAt: 0 })).toBeCloseTo(t + (1000 * 1.5 * 94) / 20, 6);
    t = round(s, t, 1000, 20); // 20 in flight, 1 s each: 20 req/s, no queue
    expect(s.step(t, 20)).toBe('kept');
    expect([s.cap, s.settled]).toEqual([20, true]);
  });

  it('goes back up to the best step when the step down lost its rate', () => {
    const s = new InFlightCapSearch(rule, 0, Infinity);
    s.onComplete(ok(0, 100, 10));
    let t = round(s, 0, 1000, 20);
    s.step(t, 16);
    t = round(s, t, 3200, 2210);
    s.step(t, 64);
    t = round(s, t, 1500, 20); // 20 in flight: 13.3 req/s, under 20 × (1 − 15%)
    expect(s.step(t, 20)).toBe('backed-off');
    expect([s.cap, s.settled]).toEqual([64, true]);
    expect(s.steps.map((x) => x.cap)).toEqual([16, 64, 20]);
  });

  it('counts what the server served at once from the streams (first → last token) that overlapped, where requests stream', () => {
    const s = new InFlightCapSearch(rule, 0, Infinity);
    // 4 slots, 1 s each (first token after 0.1 s): the 16 sent at 0 run 4 at a time; each completion sends one more.
    const streamed = (sent: number, slotStart: number) => ({ ...ok(sent, slotStart + 1000, slotStart + 100 - sent), firstTokenAtMs: slotStart + 100, lastTokenAtMs: slotStart + 1000 });
    for (let k = 0; k < 8; k++) for (let slot = 0; slot < 4; slot++) s.onComplete(streamed(k < 4 ? 0 : 1000 * (k - 4), 1000 * k));
    // The 12 settled requests (sent from the first completion on) waited 4 s of their 5: queued. Little's law on the
    // time not spent waiting says 3.2 × 1 s = 3; the streams overlapped 4 at once.
    expect(s.step(8000, 16)).toBeUndefined();
    expect(s.steps[0]).toMatchObject({ cap: 16, queued: true, servingAtOnce: 4 });
    expect(s.cap).toBe(4);
  });

  it('waits for enough settled requests, and gives the ramp time for the current step', () => {
    const s = new InFlightCapSearch(rule, 0, Infinity);
    s.onComplete(ok(0, 500));
    for (let i = 0; i < 7; i++) s.onComplete(ok(500, 1000));
    expect(s.step(1000, 16)).toBeUndefined(); // 7 settled: fewer than max(cap / 2, 8)
    expect(s.steps).toEqual([]);
    // No step yet: the rate from the completions so far, 8 in 1 s → three latencies at 16: 6 s.
    expect(s.rampLimitMs(1000, { completed: 8, firstCompletionAt: 500, lastCompletionAt: 1000 })).toBe(6000);
    expect(s.rampLimitMs(30_000, { completed: 8, firstCompletionAt: 500, lastCompletionAt: 1000 })).toBe(30_000);
  });
});
