import { describe, expect, it } from 'vitest';
import { StageAccumulator } from '../../src/metrics/accumulator.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { steadyStateFigures } from '../../src/metrics/steady-state.js';
import { runCli } from '../helpers/cli.js';

function record(id: number, sent: number, ttft: number, n: number, itl: number): RequestRecord {
  const first = sent + ttft;
  const last = first + (n - 1) * itl;
  return {
    id, stage: 0, warmup: false, status: 'ok', scheduledAtMs: sent, sentAtMs: sent, dispatchLagMs: 0, clientQueueMs: 0,
    firstTokenAtMs: first, lastTokenAtMs: last, endAtMs: last, ttftMs: ttft, e2eMs: last - sent, itlMs: itl, chunkGapsMs: [], chunks: n,
    requestedPromptTokens: 10, requestedOutputTokens: n, promptTokens: 10, outputTokens: n, tokenCountSource: 'server-usage', promptTokenSource: 'server-usage', clientPromptTokens: 10,
  };
}

describe('--steady-state: the stretch of steady requests in flight (issue 14, item 6)', () => {
  it('finds the plateau and leaves out a burst that piles requests up, with its own rates and percentiles', () => {
    const acc = new StageAccumulator();
    let id = 0;
    // 0–10 s: one request every 250 ms, each 1 s long (4 in flight, TTFT 50 ms); 10–12 s: every 50 ms, 3 s long (a pile-up).
    for (let t = 0; t < 10_000; t += 250) acc.add(record(id++, t, 50, 20, 50 / 19 + 47.37));
    for (let t = 10_000; t < 12_000; t += 50) acc.add(record(id++, t, 900, 20, 110));
    const st = steadyStateFigures(acc, 1000, 12_000, 0);
    expect(st).toBeDefined();
    expect(st?.inFlightMedian).toBe(4);
    expect(st?.startS).toBeCloseTo(1, 6);
    // The stretch ends when the pile-up starts (plus at most a few ms while the count rose through the band).
    expect((st?.startS ?? 0) + (st?.lengthS ?? 0)).toBeGreaterThan(9.9);
    expect((st?.startS ?? 0) + (st?.lengthS ?? 0)).toBeLessThan(10.3);
    expect(st?.sendRate).toBeCloseTo(4, 0);
    expect(st?.ttftMs?.median).toBe(50);
    // Nothing steady for a quarter of the window: none.
    const ramp = new StageAccumulator();
    for (let i = 0; i < 40; i++) ramp.add(record(i, i * 100, 50, 20 + i * 40, 20));
    expect(steadyStateFigures(ramp, 0, 4000, 0)).toBeUndefined();
  });

  it('predict --steady-state adds the figures to each row and a line under the table', async () => {
    const r = await runCli(['predict', '--profile', 'constant', '--rate', '4', '--steady-state', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { stages: Array<{ requestThroughput: number; steadyState?: { requestThroughput: number; lengthS: number } | null }> };
    const row = doc.stages[0];
    expect(row?.steadyState?.lengthS).toBeGreaterThan(1);
    expect(Math.abs((row?.steadyState?.requestThroughput ?? 0) - 4) / 4).toBeLessThan(0.1);
    const text = await runCli(['predict', '--profile', 'constant', '--rate', '4', '--steady-state']);
    expect(text.stdout).toMatch(/^- steady state \(the longest stretch with requests in flight within 20% of their median.*asynchronous@4\.00 req\/sec [\d.]+ s from/m);
  }, 30_000);
});
