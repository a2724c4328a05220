/**
 * bench:fidelity's workers column: a WorkerPool's records join with the simulator's truth on the coordinator's
 * clock (worker threads count performance.now() from their own start, so an unconverted stamp would land
 * before the sim wrote the token), and `--workers=` is parsed strictly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSender } from '../../bench/_sender.js';
import { joinWithTruth } from '../../bench/_join.js';
import { dist } from '../../bench/_stats.js';
import { parseWorkerCounts } from '../../bench/_workers-arg.js';
import { getDialect } from '../../src/dialects/index.js';
import { runBenchmark } from '../../src/load/benchmark.js';
import { createHttpStageRunner } from '../../src/load/http-runner.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { startSimServer, type SimServer } from '../../src/sim/server/index.js';

let sim: SimServer;
beforeAll(async () => {
  sim = await startSimServer({ engine: 'vllm', model: 'Llama-3.1-8B', gpu: 'A100-80GB', gpus: 1, seed: 7, modelTimeScale: 0.05 });
});
afterAll(async () => {
  await sim?.close();
});

async function measure(workers: number): Promise<{ records: RequestRecord[]; residualUs: number }> {
  const sender = await openSender(workers, sim.url, 16);
  const records: RequestRecord[] = [];
  try {
    const runner = createHttpStageRunner({
      target: sender.target, dialect: getDialect('openai-completions'), model: 'Llama-3.1-8B', forceLength: true, stream: true, seed: 1,
      // The 64 measured requests: the row's cool-down requests (sent after its window while the load stays on, the
      // one in flight at the end cancelled) are left out, as bench:fidelity leaves them out.
      onRecord: (r) => void (r.cooldown !== true && records.push(r)),
    });
    await runBenchmark(
      {
        profile: 'concurrent', concurrencies: [16], limits: { maxRequests: 64 },
        workload: { description: 'short', item: (i) => ({ prompt: `${i} hello`, promptTokens: 3, promptTokenSource: 'client-tokenizer', outputTokens: 8 }) },
      },
      runner,
    );
  } finally {
    await sender.close();
  }
  return { records, residualUs: sender.clockResidualUs };
}

describe('bench:fidelity with load workers', () => {
  it.each([1, 2])('%i worker(s): every record joins its truth, token counts exact, no token received before the sim wrote it', async (workers) => {
    const { records, residualUs } = await measure(workers);
    expect(records).toHaveLength(64);
    expect(records.every((r) => r.status === 'ok')).toBe(true);
    // the sim runs in this thread: its clock is the coordinator's, offset 0
    const j = joinWithTruth(records, new Map(sim.truth.finished().map((t) => [t.id, t])), 0);
    expect(j.joined).toBe(64);
    expect(j.tokensExact).toBe(64);
    expect(j.tokenEps).toHaveLength(64 * 8);
    // Causality, not timing. A request reaches the sim after the worker stamped its send. A token is received after
    // the sim wrote it, though the sim stamps the write once write() returns (or at its callback when the socket
    // buffers), and with the sim on this busy thread a worker can read the bytes before that stamp: a tail of
    // tokens "early" by the sim's own lag, never the bulk. Stamps on a wrong clock would move them all.
    expect(Math.min(...j.sendToArrival)).toBeGreaterThan(-5);
    expect(dist(j.tokenEps).p50).toBeGreaterThan(-1);
    if (workers === 1) {
      expect(records.every((r) => r.worker === undefined)).toBe(true);
      expect(residualUs).toBe(0);
    } else {
      expect(new Set(records.map((r) => r.worker))).toEqual(new Set([0, 1]));
      expect(residualUs).toBeGreaterThan(0);
      expect(residualUs).toBeLessThan(1000);
    }
  });
});

describe('--workers=', () => {
  it('takes a comma list of counts, drops repeats, and defaults when absent', () => {
    expect(parseWorkerCounts(undefined, [1, 2])).toEqual([1, 2]);
    expect(parseWorkerCounts('1', [1, 2])).toEqual([1]);
    expect(parseWorkerCounts('2, 1,2', [1])).toEqual([2, 1]);
  });

  it.each(['0', 'two', '1,', '1.5', '-1', '65'])('refuses %j with a usage error naming the fix', (bad) => {
    expect(() => parseWorkerCounts(bad, [1])).toThrowError(expect.objectContaining({ code: 'E_USAGE', message: expect.stringContaining('e.g. --workers=1,2') }));
  });
});
