import { describe, expect, it } from 'vitest';
import { ReplicaTally, replicaWarnings } from '../../src/metrics/replica-figures.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import type { ReplicaFigures } from '../../src/results/stage.js';

/**
 * Issue 51 item 12(e): "replica 0 is slower" blamed a server for round-robin's own imbalance. Two llama.cpp servers,
 * the same ITL (10.5 ms), but the closed loop's round-robin left 5.54 requests in flight on replica 0 and 2.45 on
 * replica 1, so replica 0's requests queued (TTFT p50 1982.5 vs 432.8 ms).
 */
const fig = (index: number, ttft: number, itl: number, meanInFlight?: number): ReplicaFigures => ({
  index,
  url: `http://127.0.0.1:1873${index + 1}`,
  sent: 18,
  ok: 18,
  errors: 0,
  incomplete: 0,
  ttftMs: { p50: ttft, p99: ttft },
  itlMs: { p50: itl, p99: itl },
  outputTokenThroughput: 140,
  ...(meanInFlight !== undefined ? { meanInFlight } : {}),
});

describe('a replica that held more requests is not called slower', () => {
  it('same ITL, more in flight: says it held more requests (X vs Y) and suggests least-inflight, not "is slower"', () => {
    const lines = replicaWarnings([fig(0, 1982.5, 10.5, 5.54), fig(1, 432.8, 10.5, 2.45)], { balance: 'round-robin' });
    expect(lines.join('\n')).not.toMatch(/is slower/);
    expect(lines).toEqual([
      'replica 0 (http://127.0.0.1:18731) held more requests in flight: 5.5 vs 2.5 on the others, so its requests queued (TTFT p50 1982.5 ms vs 432.8 ms on the others; ITL p50 10.5 ms vs 10.5 ms, alike) — not a slower server but round-robin\'s split (--balance least-inflight sends each request to the replica with the fewest in flight)',
    ]);
    // Behind a router the client chose nothing: the line names the router's split.
    expect(replicaWarnings([fig(0, 1982.5, 10.5, 5.54), fig(1, 432.8, 10.5, 2.45)])[0]).toMatch(/not a slower server but the router's split$/);
  });

  it('a TTFT worse at a like load, or a worse ITL, is still a slower server', () => {
    expect(replicaWarnings([fig(0, 1982.5, 10.5, 2.6), fig(1, 432.8, 10.5, 2.45)], { balance: 'round-robin' })).toEqual([
      'replica 0 (http://127.0.0.1:18731) is slower: TTFT p50 1982.5 ms vs 432.8 ms on the others',
    ]);
    // Slower per token, and so holding more: both lines name it slower.
    expect(replicaWarnings([fig(0, 1982.5, 31, 5.54), fig(1, 432.8, 10.5, 2.45)], { balance: 'round-robin' })).toEqual([
      'replica 0 (http://127.0.0.1:18731) is slower: TTFT p50 1982.5 ms vs 432.8 ms on the others',
      'replica 0 (http://127.0.0.1:18731) is slower: ITL p50 31.0 ms vs 10.5 ms on the others',
    ]);
  });

  it("each replica's mean in flight over the window counts every request on it, warm-up and cool-down too", () => {
    const t = new ReplicaTally();
    const rec = (replica: number): RequestRecord & { replica: number } =>
      ({ replica, status: 'ok', ttftMs: 10, itlMs: 1, outputTokens: 4, promptTokens: 8 }) as RequestRecord & { replica: number };
    t.add(rec(0));
    t.add(rec(1));
    // Replica 0: two requests through the whole window [1000, 2000], one half of it; replica 1: one, a quarter.
    t.occupy(0, 0, 3000);
    t.occupy(0, 500, 2500);
    t.occupy(0, 1500, 2600);
    t.occupy(1, 1750, 2750);
    const [a, b] = t.figures(1, { fromMs: 1000, toMs: 2000 });
    expect(a?.meanInFlight).toBeCloseTo(2.5, 10);
    expect(b?.meanInFlight).toBeCloseTo(0.25, 10);
  });
});
