import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StageAccumulator } from '../../src/metrics/accumulator.js';
import { buildRecord } from '../../src/metrics/derive.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import type { Exchange } from '../../src/transport/exchange.js';
import { runCli } from '../helpers/cli.js';
import { startFixedDelayServer, type FixedDelayServer } from '../helpers/openai-server.js';

const item = { prompt: 'p', promptTokens: 8, outputTokens: 5, promptTokenSource: 'client-tokenizer' as const };
const ctx = { id: 0, stage: 0, warmup: false, scheduledAtMs: 0, clientQueueMs: 0, item };
const exchange = (over: Partial<Exchange>): Exchange => ({ sentAtMs: 0, endAtMs: 100, contentTimesMs: [], textParts: [], done: true, ...over });

describe('a figure that was not measured is absent, never NaN or a made-up 0', () => {
  it('ITL needs two tokens seen apart: one chunk carrying every token has no ITL', () => {
    const oneChunk = buildRecord(exchange({ contentTimesMs: [40], textParts: ['a b c d e'], usage: { outputTokens: 5, source: 'server-usage' } }), ctx);
    expect(oneChunk.status).toBe('ok');
    expect(oneChunk.ttftMs).toBe(40);
    expect(oneChunk.itlMs).toBeUndefined();
    const streamed = buildRecord(exchange({ contentTimesMs: [40, 50, 60, 70, 80], textParts: ['a', 'b', 'c', 'd', 'e'], usage: { outputTokens: 5, source: 'server-usage' } }), ctx);
    expect(streamed.itlMs).toBe(10);
    expect(streamed.chunkGapsMs).toEqual([10, 10, 10, 10]);
  });

  it('a non-streamed reply has neither TTFT nor ITL nor chunk gaps, only its end-to-end latency', () => {
    const r = buildRecord(exchange({ contentTimesMs: [100], textParts: ['a b c d e'], usage: { outputTokens: 5, source: 'server-usage' } }), { ...ctx, streamed: false });
    expect(r.status).toBe('ok');
    expect(r.e2eMs).toBe(100);
    expect(r.ttftMs).toBeUndefined();
    expect(r.itlMs).toBeUndefined();
    expect(r.chunkGapsMs).toEqual([]);
  });

  it('an SLO criterion on an unmeasured value neither passes nor fails; no measured criterion = not good', () => {
    const rec = (over: Partial<RequestRecord>): RequestRecord =>
      ({ ...buildRecord(exchange({ contentTimesMs: [40, 50], textParts: ['a', 'b'], usage: { outputTokens: 2, source: 'server-usage' } }), ctx), ...over }) as RequestRecord;
    const good = (slo: { ttftMs?: number; itlMs?: number; e2eMs?: number }, r: RequestRecord): number => {
      const acc = new StageAccumulator(slo);
      acc.add(r);
      return acc.good;
    };
    // No ITL (a one-token reply): an ITL limit is not a pass by default ...
    expect(good({ itlMs: 10 }, rec({ itlMs: undefined }))).toBe(0);
    // ... nor does it sink a request that meets the limits that were measured.
    expect(good({ itlMs: 10, e2eMs: 1000 }, rec({ itlMs: undefined }))).toBe(1);
    expect(good({ ttftMs: 10, e2eMs: 1000 }, rec({ ttftMs: undefined }))).toBe(1);
    expect(good({ ttftMs: 10, e2eMs: 1000 }, rec({ ttftMs: 50 }))).toBe(0);
  });
});

/** The cells of the row called `label` in a printed markdown table, by header name. */
function row(stdout: string, label: string): Record<string, string> {
  const lines = stdout.split('\n').filter((l) => l.startsWith('|'));
  const cells = (l: string): string[] => l.split('|').slice(1, -1).map((c) => c.trim());
  const headers = cells(lines[0] ?? '');
  const found = lines.map(cells).find((c) => c[0] === label) ?? [];
  return Object.fromEntries(headers.map((h, i) => [h, found[i] ?? '']));
}

describe('tables show — for what a run could not measure (real HTTP, whole CLI)', () => {
  let server: FixedDelayServer;
  const root = mkdtempSync(join(tmpdir(), 'ib-unmeasured-'));
  beforeAll(async () => {
    server = await startFixedDelayServer({ ttftMs: 20, itlMs: 5 });
  });
  afterAll(() => server.close());

  it('--output-tokens 1: ITL is —, not "NaN ms"', async () => {
    const out = join(root, 'one-token');
    const res = await runCli(['run', '--target', server.url, '--profile', 'synchronous', '--max-requests', '5', '--prompt-tokens', '16', '--output-tokens', '1', '--out', out, '--no-progress']);
    expect(res.code, res.stderr).toBe(0);
    // The table and the lines under it, not the run folder's path (a random temp name may contain "NaN").
    const printed = res.stdout.replaceAll(root, '<tmp>');
    expect(printed).not.toMatch(/NaN/);
    const r = row(res.stdout, 'synchronous');
    expect(r['ITL (ms)']).toBe('—');
    expect(r['ITL p99 (ms)']).toBe('—');
    expect(r['TTFT (ms)']).toMatch(/^\d+\.\d\d$/);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { stages: Array<{ metrics: Record<string, unknown> }> };
    expect(summary.stages[0]?.metrics['itlMs']).toBeUndefined();
  });

  it('--no-stream: TTFT and ITL are — (not TTFT = end-to-end and ITL 0.00); an e2e SLO still counts', async () => {
    const out = join(root, 'no-stream');
    const res = await runCli([
      'run', '--target', server.url, '--profile', 'synchronous', '--max-requests', '5', '--prompt-tokens', '16', '--output-tokens', '8',
      '--no-stream', '--slo', 'ttft:1,e2e:60000', '--out', out, '--no-progress',
    ]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.replaceAll(root, '<tmp>')).not.toMatch(/NaN|\b0\.00 ms/);
    const r = row(res.stdout, 'synchronous');
    for (const col of ['TTFT (ms)', 'ITL (ms)', 'TTFT p99 (ms)', 'ITL p99 (ms)']) expect(r[col], col).toBe('—');
    expect(r['Latency (s)']).toMatch(/^\d+\.\d\d$/);
    const records = readFileSync(join(out, 'requests.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as RequestRecord);
    for (const rec of records.filter((x) => x.status === 'ok')) {
      expect(rec.ttftMs).toBeUndefined();
      expect(rec.itlMs).toBeUndefined();
      expect(rec.chunkGapsMs).toEqual([]);
    }
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { stages: Array<{ requests: { ok: number }; goodput?: { good: number } }> };
    const stage = summary.stages[0]!;
    // TTFT was never measured, so its 1 ms limit is not checked; every request met the e2e limit.
    expect(stage.goodput?.good).toBe(stage.requests.ok);
    expect(res.stdout).toMatch(/ttft not measured, not checked/);
  });
});
