import { describe, expect, it } from 'vitest';
import { getDialect } from '../../src/dialects/index.js';
import { runBenchmark } from '../../src/load/benchmark.js';
import { createHttpStageRunner } from '../../src/load/http-runner.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { HttpTarget } from '../../src/transport/http.js';
import { createFixedLengthWorkload } from '../../src/workload/synthetic.js';
import { startFixedDelayServer } from '../helpers/openai-server.js';

async function run(limits: { maxRequests?: number; maxSeconds?: number }, profile: 'throughput' | 'constant'): Promise<RequestRecord[]> {
  const server = await startFixedDelayServer({ ttftMs: 50, itlMs: 50 });
  const target = new HttpTarget({ baseUrl: server.url, connections: 64 });
  const records: RequestRecord[] = [];
  const runner = createHttpStageRunner({
    target, dialect: getDialect('openai-completions'), model: 'm', forceLength: true, stream: true, seed: 1, drainMs: 150,
    onRecord: (r) => records.push(r),
  });
  await runBenchmark({ profile, rates: [20], limits, workload: createFixedLengthWorkload(8, 8) }, runner);
  await target.close();
  await server.close();
  return records;
}

describe('the drain after a row', () => {
  it('never cuts a row bounded by a request count (grid cells, --max-requests)', async () => {
    const records = await run({ maxRequests: 20 }, 'throughput');
    expect(records.filter((r) => r.status === 'ok')).toHaveLength(20);
  });

  it('cuts requests still running that long after a time-limited row, and says why', async () => {
    const records = await run({ maxSeconds: 0.3 }, 'constant');
    const cut = records.filter((r) => r.status === 'incomplete');
    expect(cut.length).toBeGreaterThan(0);
    expect(cut[0]?.error?.message).toBe("still running 0.15 s after the row's time limit");
    expect(records.filter((r) => r.status === 'ok').length).toBeGreaterThan(0);
  });
});
