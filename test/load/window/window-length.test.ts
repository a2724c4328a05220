import { describe, expect, it } from 'vitest';
import { MAX_WINDOW_MS } from '../../../src/load/window/rules.js';
import { WindowLength } from '../../../src/load/window/window-length.js';

const ok = (sentAtMs: number, endAtMs: number) => ({ sentAtMs, endAtMs, status: 'ok' });

describe('WindowLength', () => {
  it('count-limited: closes once --max-requests requests were sent in it', () => {
    const l = new WindowLength({ measureRequests: 3, minSamples: 20, extendFactor: 3 });
    l.onMeasuredSend();
    l.onMeasuredSend();
    expect(l.closesNow(1000, 0)).toBe(false);
    l.onMeasuredSend();
    expect(l.closesNow(1000, 0)).toBe(true);
  });

  it('time-limited: after --max-seconds with enough samples, closes at the next completion', () => {
    const l = new WindowLength({ measureMs: 5000, minSamples: 4, extendFactor: 3 });
    for (let i = 0; i < 4; i++) l.onMeasuredSend();
    l.onComplete(ok(1500, 2500), 1000); // 1 s latency, sent after the open: counts
    expect(l.closesNow(5999, 1000)).toBe(false);
    expect(l.closesAtNextCompletion).toBe(false);
    expect(l.closesNow(6000, 1000)).toBe(false); // never at once: on the next completion
    expect(l.closesAtNextCompletion).toBe(true);
    l.closed();
    expect(l.closesAtNextCompletion).toBe(false);
  });

  it('is kept open while it has too few samples or is shorter than its own mean latency, up to extendFactor ×', () => {
    const l = new WindowLength({ measureMs: 5000, minSamples: 20, extendFactor: 3 });
    for (let i = 0; i < 5; i++) l.onMeasuredSend();
    l.onComplete(ok(0, 900), 0); // sent at the open instant: not the window's own request
    expect(l.closesNow(14_999, 0)).toBe(false);
    expect(l.closesNow(15_000, 0)).toBe(false);
    expect(l.closesAtNextCompletion).toBe(false); // none of its own requests finished: waits for one
    l.onComplete(ok(100, 9000), 0);
    l.closesNow(15_000, 0);
    expect(l.closesAtNextCompletion).toBe(true);
  });

  it(`closes at once after MAX_WINDOW_MS (${MAX_WINDOW_MS} ms) whatever its requests take`, () => {
    const l = new WindowLength({ measureMs: 1000, minSamples: 20, extendFactor: 3 });
    expect(l.closesNow(MAX_WINDOW_MS - 1, 0)).toBe(false);
    expect(l.closesNow(MAX_WINDOW_MS, 0)).toBe(true);
  });
});
