import { describe, expect, it } from 'vitest';
import { FailureStreak } from '../../../src/load/window/failure-streak.js';

const failed = (sentAtMs: number, endAtMs: number, warmup = false) => ({
  sentAtMs,
  endAtMs,
  status: 'error' as const,
  error: { code: 'E_HTTP_STATUS' as const, message: 'HTTP 503' },
  warmup,
});

describe('FailureStreak', () => {
  it('stops at the limit of fast failures in a row, saying how many were in the ramp-up and the last error', () => {
    const s = new FailureStreak(5, 250);
    const reasons = [0, 1, 2, 3, 4].map((i) => s.onComplete(failed(i * 10, i * 10 + 5, i < 2)));
    expect(reasons.slice(0, 4)).toEqual([undefined, undefined, undefined, undefined]);
    expect(reasons[4]).toBe('stopped after 5 failures in a row (3 measured, 2 in the ramp-up), each within 250 ms (E_HTTP_STATUS: HTTP 503)');
  });

  it('a success or a slow failure (a real attempt) ends the streak', () => {
    const s = new FailureStreak(3, 250);
    s.onComplete(failed(0, 10));
    s.onComplete(failed(0, 10));
    expect(s.onComplete({ sentAtMs: 0, endAtMs: 10, status: 'ok' })).toBeUndefined();
    s.onComplete(failed(0, 10));
    s.onComplete(failed(0, 10));
    expect(s.onComplete(failed(0, 250))).toBeUndefined(); // 250 ms is not "within 250 ms"
    s.onComplete(failed(0, 10));
    s.onComplete(failed(0, 10));
    expect(s.onComplete(failed(0, 10))).toBe('stopped after 3 failures in a row, each within 250 ms (E_HTTP_STATUS: HTTP 503)');
  });
});
