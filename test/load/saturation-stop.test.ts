/**
 * The over-saturation stop (window.ts) on timelines with known truth: a one-slot server of 20-ms requests, fed at a
 * constant rate, with or without a host stall. A queue that lasts stops the row; a stall that drains does not.
 */
import { describe, expect, it } from 'vitest';
import { windowRulesFor } from '../../src/load/profiles.js';
import { SteadyWindow } from '../../src/load/window.js';

const SERVICE_MS = 20;

/** Feeds the window a constant-rate row against one FIFO slot; returns why it stopped, if it did, and when. */
function feed(ratePerS: number, stall?: { fromMs: number; toMs: number }): { reason?: string; stoppedAtMs?: number } {
  const rules = windowRulesFor('open', { maxSeconds: 3 }, { saturationStop: true, dispersion: 0 });
  const w = new SteadyWindow(rules, 0, 100_000);
  const events: Array<{ at: number; kind: 'send' | 'end'; sent: number; first: number }> = [];
  let free = 0;
  for (let k = 0; k < ratePerS * 3; k++) {
    const sent = (k * 1000) / ratePerS;
    let start = Math.max(sent, free);
    if (stall && start >= stall.fromMs && start < stall.toMs) start = stall.toMs;
    free = start + SERVICE_MS;
    events.push({ at: sent, kind: 'send', sent, first: 0 }, { at: free, kind: 'end', sent, first: start + 5 });
  }
  events.sort((a, b) => a.at - b.at || (a.kind === 'end' ? -1 : 1));
  for (const e of events) {
    if (w.closed) break;
    if (e.kind === 'send') {
      if (w.sending(e.at)) w.onSend(e.at);
    } else {
      w.onComplete({ sentAtMs: e.sent, endAtMs: e.at, status: 'ok', ttftMs: e.first - e.sent });
    }
    if (w.overSaturatedReason) return { reason: w.overSaturatedReason, stoppedAtMs: e.at };
  }
  return {};
}

describe('over-saturation stop', () => {
  it('stops a row at twice the capacity within a second', () => {
    const { reason, stoppedAtMs } = feed(100);
    expect(reason).toMatch(/^over-saturated: \d+ completions for \d+ sends in [\d.]+ s after the first completion, in flight \d+ → \d+, time to first token/);
    expect(stoppedAtMs as number).toBeLessThan(1000);
  });

  it('does not stop a row under capacity that a 300-ms host stall backs up for a moment', () => {
    // 40 req/s against 50 req/s of capacity: the stall queues 12 requests and doubles latencies, then it drains.
    expect(feed(40, { fromMs: 200, toMs: 500 })).toEqual({});
    expect(feed(40)).toEqual({});
  });
});
