import { describe, expect, it } from 'vitest';
import { inFlightLimitReason, SaturationStop } from '../../../src/load/window/saturation-stop.js';

const rule = { completionShare: 0.7, minSends: 20, confirmMs: 250, dispersion: 0 };

/**
 * An open loop at 100 req/s against a server that completes 20 req/s with first tokens growing 20 ms per
 * completion: the counts the stop sees at each completion, after counting it.
 */
function overloaded(stop: SaturationStop, untilMs: number, drainFromMs = Infinity): string | undefined {
  let sent = 0;
  let completed = 0;
  for (let t = 0; t <= untilMs; t += 10) {
    if (t < drainFromMs) sent++; // from drainFromMs on, sending pauses: the requests in flight fall
    if (t >= 100 && t % 50 === 0) {
      completed++;
      const ttft = 10 + 20 * completed;
      const reason = stop.onComplete({ sentAtMs: t - 100, endAtMs: t, status: 'ok', ttftMs: ttft }, { sent, completed, firstCompletionAt: 100 });
      if (reason !== undefined) return `${t}: ${reason}`;
    }
  }
  return undefined;
}

describe('SaturationStop', () => {
  it('stops once the three signs hold and still hold confirmMs later', () => {
    const reason = overloaded(new SaturationStop(rule), 5000);
    // The first completion at 100 ms: 11 sent, 11 in flight. The signs first hold at 350 ms (25 sends and 5 completions
    // since, 30 in flight, first tokens 70 → 90 ms); they still hold 250 ms later, with more in flight: stop at 600 ms.
    expect(reason).toBe('600: over-saturated: 10 completions for 50 sends in 0.5 s after the first completion, in flight 11 → 50, time to first token 70 → 190 ms');
  });

  it('a backlog that drains (fewer in flight than when the signs appeared) is looked at again, not stopped', () => {
    // Suspected at 350 ms with 30 in flight; sending pauses at 380 ms: 28 in flight at 600 ms (the signs still hold,
    // with fewer in flight: look again), 23 at 850 ms (again), then the growth sign goes.
    expect(overloaded(new SaturationStop(rule), 5000, 380)).toBeUndefined();
    expect(overloaded(new SaturationStop(rule), 5000, 420)).toMatch(/^600: over-saturated: .* in flight 11 → 31,/);
  });

  it('keeping up (completions at the share of sends) never stops', () => {
    const stop = new SaturationStop(rule);
    for (let i = 1; i <= 200; i++) {
      expect(stop.onComplete({ sentAtMs: i * 10, endAtMs: i * 10 + 50, status: 'ok', ttftMs: 10 * i }, { sent: i + 5, completed: i, firstCompletionAt: 60 })).toBeUndefined();
    }
  });

  it('the open loop in-flight limit', () => {
    expect(inFlightLimitReason(4096, { sent: 4095, completed: 0 }, 2000)).toBeUndefined();
    expect(inFlightLimitReason(4096, { sent: 4100, completed: 4 }, 2345)).toBe(
      'over-saturated: 4096 requests in flight, the most an open loop holds (past it they would wait in the client), 4 completions for 4100 sends in 2.3 s',
    );
  });
});
