import { describe, expect, it } from 'vitest';
import { Ramp } from '../../../src/load/window/ramp.js';

const rules = (rampHops: 1 | 2, warmupMs = 0) => ({ rampHops, warmupMs, rampLimitMs: 30_000 });
const limit = (ms: number) => () => ms;

describe('Ramp', () => {
  it('closed loop (1 hop): ends at the first completion', () => {
    const r = new Ramp(rules(1), 1000, true);
    expect(r.endsAt(1500, limit(30_000))).toBeUndefined();
    r.onComplete(1000, 1800, true);
    expect(r.endsAt(1800, limit(30_000))).toBe('settled');
  });

  it('open loop (2 hops): ends when a request sent after the first completion completes', () => {
    const r = new Ramp(rules(2), 0, true);
    r.onComplete(0, 1500, true); // the first completion starts the second hop
    r.onComplete(100, 1600, true); // sent before it: still the first hop
    expect(r.endsAt(1600, limit(30_000))).toBeUndefined();
    r.onComplete(1500, 3000, true);
    expect(r.endsAt(3000, limit(30_000))).toBe('settled');
  });

  it('never before --warmup; at the ramp limit unsettled', () => {
    const warm = new Ramp(rules(1, 5000), 0, true);
    warm.onComplete(0, 100, true);
    expect(warm.endsAt(4999, limit(30_000))).toBeUndefined();
    expect(warm.endsAt(5000, limit(30_000))).toBe('settled');
    const slow = new Ramp(rules(2), 0, true);
    expect(slow.endsAt(29_999, limit(30_000))).toBeUndefined();
    expect(slow.endsAt(30_000, limit(30_000))).toBe('unsettled');
  });

  it('an open loop slower than its ramp limit (0.01 req/s): nothing sent since the first completion is settled, not a queue', () => {
    const sparse = new Ramp(rules(2), 0, true);
    sparse.onSend(0);
    sparse.onComplete(0, 120, true); // the second arrival is due at 100 s
    expect(sparse.endsAt(30_000, limit(30_000))).toBe('settled');
    const queued = new Ramp(rules(2), 0, true);
    queued.onSend(0);
    queued.onComplete(0, 120, true);
    queued.onSend(500); // sent after the first completion and still open at the limit: latency kept growing
    expect(queued.endsAt(30_000, limit(30_000))).toBe('unsettled');
  });

  it('a throughput row: the hop starts when its cap settles, or again after a back-off', () => {
    const r = new Ramp(rules(2), 0, false);
    r.onComplete(0, 100, false); // cap not settled: no hop yet
    r.onComplete(50, 200, true); // settles: the hop starts at 200
    r.onComplete(150, 300, true);
    expect(r.endsAt(300, limit(30_000))).toBeUndefined();
    r.hopAgain(400);
    r.onComplete(250, 500, true);
    expect(r.endsAt(500, limit(30_000))).toBeUndefined();
    r.onComplete(400, 900, true);
    expect(r.endsAt(900, limit(30_000))).toBe('settled');
    const kept = new Ramp(rules(2), 0, false);
    kept.loadInPlace();
    expect(kept.endsAt(10, limit(30_000))).toBe('settled');
  });

  it('limit: at least 3× the first latency for open loops, and the back-off drain', () => {
    expect(new Ramp(rules(2), 1000, true).limitMs(21_000, 0)).toBe(60_000);
    expect(new Ramp(rules(1), 1000, true).limitMs(21_000, 0)).toBe(30_000);
    expect(new Ramp(rules(2), 0, true).limitMs(null, 45_000)).toBe(45_000);
  });
});
