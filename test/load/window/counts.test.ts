import { describe, expect, it } from 'vitest';
import { WindowCounts } from '../../../src/load/window/counts.js';

/** Explicit timestamps (ms): the counts are pure bookkeeping. */
describe('WindowCounts', () => {
  it('counts sends, completions and the measured requests still open', () => {
    const c = new WindowCounts();
    c.onSend(0, false);
    c.onSend(1, true);
    c.onSend(2, true);
    expect([c.sent, c.inFlight, c.measuredOpen]).toEqual([3, 3, 2]);
    c.onComplete(10, false); // a ramp-up request: the measured ones are still open
    expect([c.completed, c.measuredOpen, c.firstCompletionAt]).toEqual([1, 2, 10]);
    c.onComplete(15, true);
    c.onComplete(12, true); // out of order: the latest completion stays 15
    expect([c.measuredOpen, c.lastCompletionAt, c.inFlight]).toEqual([0, 15, 0]);
  });

  it('weights the requests in flight by time between the window open and close only', () => {
    const c = new WindowCounts();
    for (const t of [0, 0, 0, 0]) c.onSend(t, false); // 4 in flight before the window: not tracked
    c.windowOpened(100); // 4 in flight for 100 ms
    c.onComplete(200, true); // then 3 for 100 ms
    c.onSend(300, true); // then 4 for 100 ms, the most at once: 4
    c.windowClosed(400);
    c.onSend(500, false); // after the close: not tracked
    expect(c.measuredInFlight(100, 400)).toEqual({ mean: (4 * 100 + 3 * 100 + 4 * 100) / 300, max: 4 });
    expect(c.measuredInFlight(null, 400)).toBeUndefined();
    expect(c.measuredInFlight(400, 400)).toBeUndefined();
  });
});
