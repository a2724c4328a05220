import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replicaNoteLines } from '../../src/report/replica-lines.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import { readRunFolder } from '../helpers/run-folder.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { startSlotServer, type SlotServer } from '../helpers/slot-server.js';

/**
 * Issue 51 item 12(e) and newcomer #16: `run --target A,B` against two servers with /metrics (llama.cpp's gauge
 * names) that keep serving requests their client abandoned, run in-process. The idle wait between rows must read
 * both replicas' /metrics (it said "the server has no /metrics to tell when it is done", waited 0.0 s, and the
 * previous row's cancelled requests ran into the next); the rows get the server gauge column (the replicas' added
 * up); the per-replica lines are a nested list in table.md.
 */
describe('two targets with /metrics', () => {
  let tmp: string;
  let a: SlotServer;
  let b: SlotServer;
  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'ib-two-targets-'));
    const start = (): Promise<SlotServer> => startSlotServer({ slots: 2, prefillMs: 30, tokenMs: 6, metrics: true });
    [a, b] = await Promise.all([start(), start()]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    rmSync(tmp, { recursive: true, force: true });
  });

  it("waits for every replica's /metrics to read idle between rows, shows the summed gauges, nests the replica lines", async () => {
    const out = join(tmp, 'run');
    // --drain 0: each row cancels what it still has in flight once its measured requests are done; these servers run
    // those to the end, as llama.cpp did.
    const res = await runInProcess([
      '--target', `${a.url},${b.url}`, '--profile', 'concurrent', '--concurrency', '2,4', '--max-requests', '12', '--prompt-tokens', '48',
      '--output-tokens', '10', '--tokenizer', 'approx', '--drain', '0', '--no-progress', '--out', out,
    ]);
    expect(res.code, res.stderr).toBe(0);
    const { doc } = readRunFolder(out);
    const [first, second] = doc.stages as [StageSummary, StageSummary];
    // The first row left requests on the servers (else there was nothing to wait for).
    expect((first.requests.cooldownCut ?? 0) + first.requests.incomplete, JSON.stringify(first.requests)).toBeGreaterThan(0);
    expect(second.idleWait?.method).not.toMatch(/no \/metrics/);
    expect(second.idleWait?.method).toMatch(/until every replica's \/metrics read running \+ waiting = 0 twice/);
    expect(second.idleWait?.idle).toBe(true);
    // No request of the second row reached a server still running one the first row had abandoned.
    expect(a.stats.abandonedServed + b.stats.abandonedServed).toBeGreaterThan(0);
    expect(a.stats.arrivedOnAbandoned + b.stats.arrivedOnAbandoned).toBe(0);

    // The gauge column, from both replicas' /metrics added up; each replica's own gauges on its line.
    for (const s of doc.stages) {
      expect(s.server?.replicas, s.label).toBe(2);
      expect(s.server?.window, s.label).toBeDefined();
      expect(s.replicas?.every((r) => r.server?.window !== undefined && r.meanInFlight !== undefined), s.label).toBe(true);
    }
    const header = res.stdout.split('\n').find((l) => l.startsWith('| Benchmark'));
    expect(header).toContain('Server peak run/wait/KV');
    const md = readFileSync(join(out, 'table.md'), 'utf8');
    expect(md).toContain('Server peak run/wait/KV');

    // A nested Markdown list (was "-   replica 0 …", a flattened one), in table.md and on the terminal alike.
    for (const text of [md, res.stdout]) {
      expect(text).toMatch(/^- replicas in concurrent@2 \(measured requests; ok\/sent\):\n {2}- replica 0 http:\/\/127\.0\.0\.1:\d+: \d+\/\d+ ok, .* in flight \(mean\)/m);
      expect(text).toMatch(/^ {2}- replica 1 http:\/\/127\.0\.0\.1:\d+: /m);
      expect(text).not.toMatch(/^-\s{2,}replica/m);
    }
  }, 120_000);
});

describe('per-replica cache hits', () => {
  const replica = (index: number, extra: Partial<NonNullable<StageSummary['replicas']>[number]> = {}): NonNullable<StageSummary['replicas']>[number] => ({
    index, sent: 32, ok: 32, errors: 0, incomplete: 0, outputTokenThroughput: 100, ...extra,
  });
  const row = (over: Partial<StageSummary>): StageSummary => ({ label: 'concurrent@8', ...over }) as StageSummary;

  it("a row whose cache hit rate came from one /metrics for all replicas (sim --replicas behind its router) says so on the replicas' heading", () => {
    const [line] = replicaNoteLines([row({ prefixCacheHitRate: 0.673, prefixCacheSource: 'server-counters', replicas: [replica(0), replica(1)] })]);
    expect(line).toMatch(/^replicas in concurrent@8 \(measured requests; ok\/sent; cache hit 67\.3% over all replicas by the server's \/metrics, not split by replica \(cached tokens in each reply would split it: vLLM --enable-prompt-tokens-details/);
  });

  it('each replica with its own cache figure shows it on its line', () => {
    const [line] = replicaNoteLines([row({ prefixCacheHitRate: 0.5, prefixCacheSource: 'usage', replicas: [replica(0, { prefixCacheHitRate: 0.78 }), replica(1, { prefixCacheHitRate: 0.22 })] })]);
    expect(line).toMatch(/\n {2}- replica 0: 32\/32 ok, .*, cache hit 78\.0%/);
    expect(line).toMatch(/\n {2}- replica 1: 32\/32 ok, .*, cache hit 22\.0%/);
    expect(line).not.toContain('over all replicas');
  });
});
