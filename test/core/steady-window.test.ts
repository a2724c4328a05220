import { describe, expect, it } from 'vitest';
import { windowRulesFor } from '../../src/load/profiles.js';
import { SteadyWindow } from '../../src/load/window.js';

/** A finished request as the drivers hand it over. */
const finished = (sentAtMs: number, endAtMs: number, ok: boolean, message?: string) => ({
  sentAtMs,
  endAtMs,
  status: ok ? ('ok' as const) : ('error' as const),
  ...(message ? { error: { code: 'E_HTTP_STATUS' as const, message } } : {}),
});

/** The window rules in isolation (virtual times in ms): the same object drives run and predict. */
describe('SteadyWindow', () => {
  it('closed loop: opens at the first completion, measures the ramp requests too, closes after --max-seconds', () => {
    const w = new SteadyWindow(windowRulesFor('closed', { maxSeconds: 5 }), 0, 1);
    expect(w.onSend(0)).toBe(true); // a closed loop's first request already runs at its N in flight
    w.onComplete(finished(0, 1000, true));
    let t = 1000;
    for (let i = 0; i < 30; i++, t += 1000) {
      if (!w.sending(t)) break;
      w.onSend(t);
      w.onComplete(finished(t, t + 1000, true));
    }
    const o = w.outcome(t);
    expect(o.openAtMs).toBe(1000);
    // Fewer than 20 samples after 5 s at one request a second: kept open up to 3 × 5 s, then closed on the next
    // completion — a window from completion to completion holds whole intervals (16 of 1 s each here).
    expect((o.closeAtMs as number) - 1000).toBe(16_000);
  });

  it('open loop: requests sent before the second hop are ramp-up; the window opens when a request sent after the first completion completes', () => {
    const w = new SteadyWindow(windowRulesFor('open', { maxSeconds: 2 }), 0, Infinity);
    // 10 req/s, each takes 1.5 s.
    const sent: number[] = [];
    for (let t = 0; t < 12_000; t += 100) {
      for (const s of sent.filter((x) => x + 1500 <= t && x + 1500 > t - 100)) w.onComplete(finished(s, s + 1500, true));
      if (!w.sending(t)) break;
      const measured = w.onSend(t);
      if (t < 1500) expect(measured).toBe(false);
      sent.push(t);
    }
    const o = w.outcome(12_000);
    // First completion at 1.5 s; the request sent at 1.5 s completes at 3.0 s: the window opens there.
    expect(o.openAtMs).toBe(3000);
    expect((o.closeAtMs as number) - 3000).toBeGreaterThanOrEqual(2000);
  });

  it('count-limited: measures exactly --max-requests requests', () => {
    const w = new SteadyWindow(windowRulesFor('closed', { maxRequests: 7 }), 0, 1);
    let measured = 0;
    for (let t = 0; w.sending(t); t += 10) {
      if (w.onSend(t)) measured++;
      w.onComplete(finished(t, t + 10, true));
    }
    expect(measured).toBe(7);
  });

  it('stops after 20 fast failures in a row, saying why', () => {
    const w = new SteadyWindow(windowRulesFor('closed', { maxSeconds: 60 }), 0, 1);
    let n = 0;
    for (let t = 0; w.sending(t) && n < 1000; t += 2, n++) {
      w.onSend(t);
      w.onComplete(finished(t, t + 1, false, 'HTTP 503'));
    }
    expect(n).toBe(20);
    expect(w.outcome(100).stoppedEarly).toMatch(/20 failures in a row.*503/);
  });

  it('throughput: raises the cap ×4 while the completion rate grows, and keeps the first cap that stops gaining', () => {
    const w = new SteadyWindow(windowRulesFor('burst', { maxSeconds: 5 }), 0, Infinity);
    expect(w.inFlightCap()).toBe(16);
    // A server with 20 slots, 1 s per request: rate = min(cap, 20) / latency, latency grows past 20 in flight.
    const latency = (cap: number): number => 1000 * Math.max(1, cap / 20);
    let t = 0;
    // Whole rounds: each step settles after its first round (one full latency at its cap) and is measured on the next.
    for (let round = 0; round < 8; round++) {
      const cap = w.inFlightCap();
      for (let i = 0; i < cap; i++) {
        w.onSend(t);
        w.onComplete(finished(t, t + latency(cap), true));
      }
      t += latency(cap) + 1;
      w.sending(t);
    }
    const search = w.outcome(t).capSearch!;
    // 16 → 16 req/s, 64 → 20 req/s (+25%: go on), 256 → 20 req/s (no gain: back to 64).
    expect(search.steps.map((s) => s.cap)).toEqual([16, 64, 256]);
    expect(search.steps[1]!.completionRate).toBeCloseTo(20, 5);
    expect(search.cap).toBe(64);
  });

  it('cool-down: after the window closes the row keeps sending, unmeasured, until every measured request has finished', () => {
    const w = new SteadyWindow(windowRulesFor('closed', { maxRequests: 3 }), 0, 2);
    // Three measured sends (a closed loop measures from its first), none finished yet.
    for (const t of [0, 1, 2]) expect(w.onSend(t)).toBe(true);
    w.onComplete({ ...finished(0, 10, true), warmup: false });
    // The window has its 3 requests: it closes at the next send's instant, and the load stays on.
    expect(w.sending(11)).toBe(true);
    expect(w.coolingDown).toBe(true);
    expect(w.closedAtMs).toBe(11);
    expect(w.onSend(11)).toBe(false);
    w.onComplete({ ...finished(11, 20, true), warmup: true }); // a cool-down request: changes nothing
    w.onComplete({ ...finished(1, 21, true), warmup: false });
    expect(w.sending(22)).toBe(true);
    expect(w.measuredRequestsDone).toBe(false);
    w.onComplete({ ...finished(2, 30, true), warmup: false });
    expect(w.measuredRequestsDone).toBe(true);
    expect(w.sending(30)).toBe(false);
    expect(w.outcome(30).closeAtMs).toBe(11);
  });

  it('a stop (fast failures, over-saturation, a silent server) closes at once, with no cool-down', () => {
    const w = new SteadyWindow(windowRulesFor('closed', { maxSeconds: 60 }), 0, 2);
    w.onSend(0);
    w.onSend(0);
    w.stop(5, 'no reply from the server in 1 s (2 requests open): stopped');
    expect(w.sending(6)).toBe(false);
    expect(w.coolingDown).toBe(false);
    expect(w.measuredRequestsDone).toBe(false);
    expect(w.outcome(6).stoppedEarly).toBe('no reply from the server in 1 s (2 requests open): stopped');
  });
});
