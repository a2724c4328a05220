import { describe, expect, it } from 'vitest';
import { ReplicaSender } from '../../src/load/replica-sender.js';
import { ReplicaTally, replicaWarnings } from '../../src/metrics/replica-figures.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import type { ReplicaFigures } from '../../src/results/stage.js';

const rec = (replica: number, ttftMs: number, itlMs: number, extra: Partial<RequestRecord> = {}): RequestRecord & { replica: number } =>
  ({ replica, status: 'ok', ttftMs, itlMs, outputTokens: 10, promptTokens: 100, ...extra }) as RequestRecord & { replica: number };

const fig = (index: number, sent: number, ttft: number, itl: number): ReplicaFigures =>
  ({ index, sent, ok: sent, errors: 0, incomplete: 0, ttftMs: { p50: ttft, p99: ttft }, itlMs: { p50: itl, p99: itl }, outputTokenThroughput: 0 });

describe('per-replica figures', () => {
  it('tallies each replica: counts, medians, tokens over the window, cache hit rate from usage', () => {
    const t = new ReplicaTally();
    for (const v of [10, 20, 30]) t.add(rec(0, v, 1, { cachedTokens: 50 }));
    t.add(rec(1, 100, 5));
    t.add(rec(1, 0, 0, { status: 'error' }));
    const [a, b] = t.figures(2);
    expect(a).toMatchObject({ index: 0, sent: 3, ok: 3, ttftMs: { p50: 20 }, outputTokenThroughput: 15, prefixCacheHitRate: 0.5, prefixCacheSource: 'usage' });
    expect(b).toMatchObject({ index: 1, sent: 2, ok: 1, errors: 1, ttftMs: { p50: 100 } });
    expect(b?.prefixCacheHitRate).toBeUndefined();
  });

  it('names a replica 1.5× slower or busier than the rest, and one that went down', () => {
    expect(replicaWarnings([fig(0, 20, 50, 10), fig(1, 20, 60, 11)])).toEqual([]);
    const slow = replicaWarnings([fig(0, 20, 50, 10), fig(1, 20, 50, 31)]);
    expect(slow).toEqual(['replica 1 is slower: ITL p50 31.0 ms vs 10.0 ms on the others']);
    const busy = replicaWarnings([fig(0, 40, 50, 10), fig(1, 10, 50, 10), fig(2, 10, 50, 10)]);
    expect(busy).toEqual(['replica 0 is busier: it served 40 of 60 requests (an even share is 20)']);
    const down = replicaWarnings([{ ...fig(0, 20, 50, 10), url: 'http://a', down: { atS: 2.25, error: 'E_CONNECT: refused' } }]);
    expect(down[0]).toBe('replica 0 (http://a) went down 2.3 s into the row (E_CONNECT: refused); the others carried the rest');
  });
});

describe('ReplicaSender.pick', () => {
  const idle = { send: async () => ({}) as never, abortAll: () => {} };
  it('round-robin takes turns; session keeps an affinity on its replica', () => {
    const rr = new ReplicaSender([idle, idle, idle], 'round-robin');
    expect([0, 1, 2, 3].map(() => rr.pick())).toEqual([0, 1, 2, 0]);
    const s = new ReplicaSender([idle, idle, idle], 'session');
    expect([5, 5, 7, 5].map((affinity) => s.pick({ affinity }))).toEqual([2, 2, 1, 2]);
  });
});
