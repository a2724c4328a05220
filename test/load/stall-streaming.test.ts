/**
 * Issue 51, item 3: a burst larger than the engine's batch against the vLLM 0.2 simulator over HTTP stopped at the
 * stall timeout with 0 of 300 done. Nothing was stuck: vLLM 0.2 prefills every admitted prompt before it decodes, so
 * the first request of a 300-prompt burst ends ~31 s after the send while tokens stream all along, and the stall watch
 * counted only completions. It now counts reply bytes too: a server that streams is answering.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDialect } from '../../src/dialects/index.js';
import { runBenchmark } from '../../src/load/benchmark.js';
import { createHttpStageRunner, type ExchangeSender } from '../../src/load/http-runner.js';
import { WorkerPool } from '../../src/distributed/worker-pool.js';
import { StallWatch } from '../../src/load/stall.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { startSimServer, type SimServer } from '../../src/sim/server/index.js';
import { HttpTarget } from '../../src/transport/http.js';
import { createFixedLengthWorkload } from '../../src/workload/synthetic.js';
import { VirtualClock } from '../../src/core/virtual-clock.js';

describe('the stall watch', () => {
  it('counts reply bytes of open requests as an answering server, and still stops a silent one', () => {
    const clock = new VirtualClock(0);
    const stalls: number[] = [];
    const watch = new StallWatch(1000, 0, (_open, now) => stalls.push(now), clock);
    watch.onSend();
    // Bytes every 400 ms for 3 s, and no completion: not a stall.
    for (let t = 400; t <= 3000; t += 400) clock.schedule(t, () => watch.onReply());
    clock.run(3000);
    expect(stalls).toEqual([]);
    // Then nothing: stopped about a second after the last bytes (the watch looks every 250 ms).
    clock.run(10_000);
    expect(stalls).toHaveLength(1);
    expect(stalls[0]).toBeGreaterThanOrEqual(3800);
    expect(stalls[0]).toBeLessThan(4100);
    watch.stop();
  });
});

describe('a burst larger than max sequences against the vLLM 0.2 simulator over HTTP', () => {
  let sim: SimServer;
  beforeAll(async () => {
    // Seed 004's deployment with 2 sequences at a time: a burst of 4 runs in 2 waves, and each wave's first request
    // ends well after the 500 ms stall limit below while its tokens stream every few tens of ms.
    sim = await startSimServer({ engine: 'vllm-legacy', model: 'Mistral-7B-OpenOrca-AWQ', gpu: 'A100-40GB', gpus: 1, quant: 'awq', maxNumSeqs: 2, seed: 3 });
  });
  afterAll(() => sim.close());

  // One sender in this thread, and a pool of load worker threads (their reply notes cross the thread boundary).
  it.each([1, 2])('completes every request when the first completion comes after the stall limit (%i sending thread(s))', async (workers) => {
    const target: ExchangeSender = workers > 1 ? await WorkerPool.start({ workers, baseUrl: sim.url, connections: 8 }) : new HttpTarget({ baseUrl: sim.url, connections: 8 });
    const records: RequestRecord[] = [];
    const runner = createHttpStageRunner({
      target, dialect: getDialect('vllm'), model: 'Mistral-7B-OpenOrca-AWQ', forceLength: true, stream: true, seed: 1, onRecord: (r) => records.push(r),
    });
    try {
      const result = await runBenchmark({ profile: 'throughput', limits: { maxRequests: 4 }, workload: createFixedLengthWorkload(64, 64) }, runner, { stallMs: 500 });
      expect(result.stages[0]?.stoppedEarly).toBeUndefined();
      expect(records.filter((r) => r.status === 'ok')).toHaveLength(4);
      // The premise: the first request finished after the stall limit (its tokens kept the row alive).
      const firstEnd = Math.min(...records.map((r) => r.endAtMs)) - Math.min(...records.map((r) => r.sentAtMs));
      expect(firstEnd).toBeGreaterThan(500);
    } finally {
      await (target as HttpTarget | WorkerPool).close();
    }
  }, 30_000);
});
