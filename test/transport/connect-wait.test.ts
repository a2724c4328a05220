import { describe, expect, it } from 'vitest';
import { getDialect } from '../../src/dialects/index.js';
import { runBenchmark } from '../../src/load/benchmark.js';
import { createHttpStageRunner } from '../../src/load/http-runner.js';
import type { StageSpec } from '../../src/load/types.js';
import { StageAccumulator } from '../../src/metrics/accumulator.js';
import { HealthMonitor, healthLine } from '../../src/metrics/health.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { summarizeStage, type StageSummary } from '../../src/metrics/summary.js';
import { HttpTarget } from '../../src/transport/http.js';
import { createFixedLengthWorkload } from '../../src/workload/synthetic.js';
import { startClosingServer } from '../helpers/closing-server.js';

/** A measured, successful record sent `lagMs` after its target time, `connectMs` of it opening a connection. */
function record(id: number, lagMs: number, connectMs: number | undefined): RequestRecord {
  const sent = 1000 * id + lagMs;
  return {
    id, stage: 0, warmup: false, status: 'ok', scheduledAtMs: 1000 * id, sentAtMs: sent, dispatchLagMs: lagMs, clientQueueMs: 0,
    ...(connectMs !== undefined ? { connectWaitMs: connectMs } : {}),
    firstTokenAtMs: sent + 20, lastTokenAtMs: sent + 50, endAtMs: sent + 50, ttftMs: 20, e2eMs: 50, chunkGapsMs: [30], chunks: 2,
    requestedPromptTokens: 8, requestedOutputTokens: 2, promptTokens: 8, outputTokens: 2, tokenCountSource: 'server-usage',
    promptTokenSource: 'server-usage', clientPromptTokens: 8,
  };
}

function row(records: RequestRecord[]): StageSummary {
  const acc = new StageAccumulator();
  for (const r of records) acc.add(r);
  const spec = { kind: 'closed', label: 'synchronous', concurrency: 1 } as unknown as StageSpec;
  return summarizeStage({ spec, index: 0, records: [], accumulator: acc, startedAtMs: 0, endedAtMs: 60_000, interrupted: false });
}

describe('connection setup is not counted as client lag', () => {
  it('30 ms of dispatch lag spent opening connections does not say the client is the bottleneck', () => {
    // A server that closes every connection after its reply, reached through a slow connect (DNS, a far host).
    const s = row(Array.from({ length: 20 }, (_, i) => record(i, 30, 29.5)));
    expect(s.metrics.dispatchLagMs?.p99).toBeCloseTo(30);
    expect(s.metrics.connectWaitMs?.p99).toBeCloseTo(29.5);
    expect(s.metrics.timerLagMs?.p99).toBeCloseTo(0.5);
    const h = new HealthMonitor().finish([s]);
    expect(h.dispatchLagP99Ms).toBeCloseTo(0.5);
    expect(h.connectWaitP99Ms).toBeCloseTo(29.5);
    expect(h.warning ?? '').not.toMatch(/dispatch lag/);
    expect(healthLine(h)).toMatch(/connection setup p99 29\.50 ms \(not client lag\)/);
  });

  it('a late timer is still the client\'s lag', () => {
    const s = row(Array.from({ length: 20 }, (_, i) => record(i, 30, 0.2)));
    const h = new HealthMonitor().finish([s]);
    expect(h.dispatchLagP99Ms).toBeCloseTo(29.8);
    expect(h.warning).toMatch(/dispatch lag p99 29\.8 ms/);
  });

  it('records without a connect wait (simulated runs) count their whole lag as before', () => {
    const s = row(Array.from({ length: 5 }, (_, i) => record(i, 12, undefined)));
    expect(s.metrics.timerLagMs?.p99).toBeCloseTo(12);
    expect(s.metrics.connectWaitMs?.p99).toBe(0);
  });

  it('every HTTP record carries its connect wait, a part of its dispatch lag', async () => {
    const server = await startClosingServer({ closeDelayMs: 0 });
    const target = new HttpTarget({ baseUrl: server.url, connections: 2 });
    const records: RequestRecord[] = [];
    try {
      const runner = createHttpStageRunner({
        target, dialect: getDialect('openai-completions'), model: 'm', forceLength: true, stream: true, seed: 1, onRecord: (r) => records.push(r),
      });
      await runBenchmark({ profile: 'concurrent', concurrencies: [2], limits: { maxRequests: 10 }, workload: createFixedLengthWorkload(8, 3) }, runner);
    } finally {
      await target.close();
      await server.close();
    }
    // The row's cool-down requests are records too; the one still in flight when the last measured request finished
    // was cancelled (incomplete) and is left out here. Every other record, measured or cool-down, succeeded.
    expect(records.filter((r) => r.cooldown !== true).length).toBeGreaterThanOrEqual(10);
    for (const r of records.filter((x) => !(x.cooldown === true && x.status === 'incomplete'))) {
      expect(r.status).toBe('ok');
      expect(r.connectWaitMs).toBeGreaterThanOrEqual(0);
      expect(r.connectWaitMs).toBeLessThanOrEqual(r.dispatchLagMs);
    }
  });
});
