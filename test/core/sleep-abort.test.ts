/**
 * An aborted sleep lets go of its timer: a Ctrl-C during a row of 0.01 req/s (an arrival due in 100 s) must not keep
 * the process alive until that arrival's time. Counted with Node's own list of the handles that keep it alive.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { realClock, sleepUntil } from '../../src/core/clock.js';

const timeouts = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('aborting a real-clock sleep', () => {
  it('sleepUntil: the abort resolves it and clears its timer', async () => {
    const before = timeouts();
    const stop = new AbortController();
    const slept = sleepUntil(performance.now() + 100_000, stop.signal);
    expect(timeouts()).toBe(before + 1);
    stop.abort();
    await slept;
    expect(timeouts()).toBe(before);
  });

  it('a precise timer cancelled before its time leaves no timer behind and never runs', async () => {
    const before = timeouts();
    let ran = false;
    const timer = realClock.setTimer(performance.now() + 100_000, () => (ran = true), { precise: true });
    expect(timeouts()).toBe(before + 1);
    timer.cancel();
    await new Promise((r) => setImmediate(r));
    expect(timeouts()).toBe(before);
    expect(ran).toBe(false);
  });
});
