import { describe, expect, it } from 'vitest';
import { sleepOn } from '../../src/core/clock.js';
import { VirtualClock } from '../../src/core/virtual-clock.js';

describe('VirtualClock: the discrete-event clock predict runs the load driver and the engine on', () => {
  it('runs timers in time order (equal times in the order set), deferred work before time moves, and skips cancelled timers', () => {
    const clock = new VirtualClock(1000);
    const seen: string[] = [];
    clock.setTimer(1020, () => seen.push(`b@${clock.now()}`));
    clock.schedule(1010, () => {
      seen.push(`a@${clock.now()}`);
      clock.defer(() => seen.push(`deferred@${clock.now()}`));
    });
    clock.setTimer(1020, () => seen.push(`c@${clock.now()}`));
    const cancelled = clock.setTimer(1015, () => seen.push('cancelled'));
    cancelled.cancel();
    clock.setTimer(900, () => seen.push(`past@${clock.now()}`));
    expect(clock.run()).toBe(5);
    expect(seen).toEqual(['past@1000', 'a@1010', 'deferred@1010', 'b@1020', 'c@1020']);
  });

  it('runAsync lets awaiting code run between timers: an async loop of sleeps takes virtual, not real, time', async () => {
    const clock = new VirtualClock(0);
    const woke: number[] = [];
    const loop = (async () => {
      for (let i = 1; i <= 3; i++) {
        await sleepOn(clock, i * 60_000);
        woke.push(clock.now());
        await Promise.resolve();
      }
    })();
    const started = performance.now();
    await clock.runAsync();
    await loop;
    expect(woke).toEqual([60_000, 120_000, 180_000]);
    expect(performance.now() - started).toBeLessThan(60_000);
  });
});
