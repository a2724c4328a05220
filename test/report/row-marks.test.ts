import { describe, expect, it } from 'vitest';
import type { StageSummary } from '../../src/metrics/summary.js';
import { sweepTable } from '../../src/report/layouts.js';
import { rowNoteLines } from '../../src/report/row-notes.js';

const stat = (v: number, count: number): Record<string, number> => ({ count, mean: v, median: v, p90: v, p95: v, p99: v, min: v, max: v, stddev: 0 });

const row = (label: string, ok: number, extra: Partial<StageSummary> = {}): StageSummary =>
  ({
    index: 0, label, kind: 'open', targetRate: 2, durationS: 5,
    requests: { total: ok, ok, errors: 0, incomplete: 0, warmup: 3 },
    errorsByCode: {}, failureShare: 0, requestThroughput: 2, outputTokenThroughput: 256, promptTokenThroughput: 0,
    totalTokenThroughput: 0, sendRate: 2, completionRate: 2, belowTarget: false, meanConcurrency: 2,
    metrics: { ttftMs: stat(50, ok), itlMs: stat(10, ok), e2eMs: stat(1000, ok) },
    outputLengthMismatches: 0, promptLengthMismatches: 0, tokenCountSources: {}, interrupted: false,
    ...extra,
  }) as unknown as StageSummary;

describe('sample counts and marks in a sweep table', () => {
  it('every row shows ok/sent; a p99 from fewer than 20 samples carries † and a line says which rows', () => {
    const t = sweepTable([row('asynchronous@2.00 req/sec', 12), row('asynchronous@4.00 req/sec', 40)]);
    const samples = t.headers.indexOf('Requests ok/sent');
    expect(samples).toBeGreaterThan(0);
    expect(t.rows.map((r) => r[samples])).toEqual(['12/12', '40/40']);
    const p99 = t.headers.indexOf('TTFT p99');
    expect(t.rows[0]![p99]).toBe('50.00 ms †');
    expect(t.rows[1]![p99]).toBe('50.00 ms');
    expect(rowNoteLines([row('asynchronous@2.00 req/sec', 12)])).toContain('† p99 from fewer than 20 samples: asynchronous@2.00 req/sec (12)');
  });

  it('a row with nothing measured shows — in every figure and says why under the table, never in a numeric column', () => {
    const failed = row('synchronous', 0, { requests: { total: 5, ok: 0, errors: 5, incomplete: 0, warmup: 0 }, errorsByCode: { 'E_HTTP_STATUS:503': 5 }, failureShare: 1, firstError: 'E_HTTP_STATUS: HTTP 503: <html><title>Service Unavailable</title></html>', metrics: {} });
    const t = sweepTable([failed]);
    expect(t.rows[0]!.slice(1, 8)).toEqual(['—', '—', '—', '—', '—', '—', '—']);
    const notes = rowNoteLines([failed]).join('\n');
    expect(notes).toMatch(/synchronous: all failed: E_HTTP_STATUS: HTTP 503/);
    expect(notes).not.toMatch(/<title>/);
  });
});

describe('rows on a latency-vs-throughput curve', () => {
  it('an overloaded row, or one that completed nothing in its window, is not a point of the curve', async () => {
    const { onCurve } = await import('../../src/metrics/summary.js');
    expect(onCurve(row('asynchronous@2.00 req/sec', 30))).toBe(true);
    expect(onCurve(row('asynchronous@3.04 req/sec', 30, { belowTarget: true, requestThroughput: 1.85 }))).toBe(false);
    expect(onCurve(row('asynchronous@8.00 req/sec', 30, { requestThroughput: 0 }))).toBe(false);
  });
});
