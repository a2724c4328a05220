import { describe, expect, it } from 'vitest';
import { StageAccumulator } from '../../src/metrics/accumulator.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { windowFigures } from '../../src/metrics/window-figures.js';
import { runCli } from '../helpers/cli.js';

interface Doc {
  stages: Array<{ label: string; requestThroughput: number; outputTokenThroughput: number; requests: { total: number }; window?: { capSearch?: { cap: number; steps: Array<{ cap: number; completionRate: number }> } } }>;
}

/**
 * Throughput rows on servers whose requests take longer than the window (a 72B model, 256 in flight): in virtual
 * time a whole batch finishes at one instant — the one the window opens on — and nothing may finish inside a 15-s
 * window at all.
 */
describe('throughput rows on a slow server', () => {
  it('a completion at the instant the window opens is the ramp\'s, not the window\'s', () => {
    const acc = new StageAccumulator();
    const rec = (sent: number, end: number): RequestRecord =>
      ({ id: 0, stage: 0, warmup: true, status: 'ok', scheduledAtMs: sent, sentAtMs: sent, dispatchLagMs: 0, clientQueueMs: 0, endAtMs: end, firstTokenAtMs: sent + 1, lastTokenAtMs: end, chunkGapsMs: [], chunks: 2, requestedPromptTokens: 1, requestedOutputTokens: 2, promptTokens: 1, outputTokens: 2, tokenCountSource: 'server-usage', promptTokenSource: 'server-usage', clientPromptTokens: 1 }) as RequestRecord;
    for (let i = 0; i < 10; i++) acc.add(rec(0, 1000));
    acc.add(rec(1000, 1500));
    const f = windowFigures(acc, 1000, 2000);
    expect(f.completions).toBe(1);
  });

  it('predicts the rate its own cap search found, with the requested output length per request', async () => {
    const res = await runCli(['predict', '--profile', 'throughput', '--engine', 'vllm-v0', '--model', 'Qwen2-72B-Instruct-AWQ', '--gpu', 'A100-80GB', '--gpus', '2', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const s = (JSON.parse(res.stdout) as Doc).stages[0]!;
    const steps = s.window!.capSearch!.steps;
    const kept = steps.find((x) => x.cap === s.window!.capSearch!.cap)!;
    expect(s.requestThroughput).toBeGreaterThan(0.7 * kept.completionRate);
    expect(s.requestThroughput).toBeLessThan(1.5 * kept.completionRate);
    expect(s.outputTokenThroughput / s.requestThroughput).toBeGreaterThan(100);
    expect(s.outputTokenThroughput / s.requestThroughput).toBeLessThan(160);
  }, 60_000);

  it('seed 003\'s setup (72B, 4× L20): the sweep measures its throughput row and runs all 11 rows', async () => {
    const res = await runCli(['predict', '--engine', 'vllm-v0', '--model', 'Qwen2-72B-Instruct-GPTQ-Int8', '--gpu', 'L20-48GB', '--gpus', '4', '--profile', 'sweep', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const doc = JSON.parse(res.stdout) as Doc;
    expect(doc.stages).toHaveLength(11);
    const throughput = doc.stages.find((x) => x.label === 'throughput')!;
    expect(throughput.requests.total).toBeGreaterThan(0);
    expect(throughput.requestThroughput).toBeGreaterThan(0);
  }, 60_000);
});
