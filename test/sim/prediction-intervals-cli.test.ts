import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

/**
 * `predict --json`, `predict --profile capacity --json` and `plan --json` carry prediction intervals (virtual time,
 * deterministic), and the intervals widen for a GPU or a model family no published table covers.
 */
type Range = { low: number; high: number; source?: string };
type Intervals = { level: number; basis: string; unseen?: string[]; ttftMs?: Range; itlMs?: Range; e2eMs?: Range; outputTokenThroughput?: Range; requestThroughput?: Range };
type Stage = { requestThroughput: number; outputTokenThroughput: number; metrics: { ttftMs: { mean: number }; itlMs: { mean: number }; e2eMs: { mean: number } }; predictionIntervals?: Intervals };

let root: string;
let catalog: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'ib-intervals-'));
  catalog = join(root, 'catalog.json');
  // An A100-80GB under another name, and Qwen2-7B's shape under a family name no table has.
  writeFileSync(catalog, JSON.stringify({
    hardware: { 'Madeup-X1': { tflops: 312, memGiB: 80, bwGBs: 2039, link: 'nvlink' } },
    models: { 'Zeta-7B': { layers: 28, hidden: 3584, heads: 28, kvHeads: 4, headDim: 128, ffn: 18944, vocab: 152064, maxModelLen: 32768 } },
  }));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const predictArgs = ['predict', '--profile', 'concurrent', '--concurrency', '1,16', '--max-seconds', '3', '--prompt-tokens', '256', '--output-tokens', '64', '--json'];
const width = (r: Range | undefined): number => (r ? r.high / r.low : Number.NaN);

async function predictStages(extra: string[]): Promise<Stage[]> {
  const r = await runCli([...predictArgs, ...extra]);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { stages: Stage[] }).stages;
}

describe('prediction intervals in predict and plan', () => {
  it('predict --json: every row has intervals on TTFT, ITL, e2e, output tok/s and req/s around its figures; the terminal shows them', async () => {
    const stages = await predictStages(['--gpu', 'A100-80GB', '--engine', 'vllm-v0']);
    expect(stages).toHaveLength(2);
    for (const s of stages) {
      const pi = s.predictionIntervals as Intervals;
      expect(pi.level).toBe(80);
      expect(pi.basis).toBe('published');
      expect(pi.unseen).toBeUndefined();
      const figures: Array<[Range | undefined, number]> = [
        [pi.ttftMs, s.metrics.ttftMs.mean], [pi.itlMs, s.metrics.itlMs.mean], [pi.e2eMs, s.metrics.e2eMs.mean],
        [pi.outputTokenThroughput, s.outputTokenThroughput], [pi.requestThroughput, s.requestThroughput],
      ];
      for (const [range, v] of figures) {
        expect(range).toBeDefined();
        // The interval is where the truth lies given the held-out residuals: a family the simulator over-predicts
        // has both ends below the figure, so only its order and scale are asserted.
        expect(range?.low).toBeGreaterThan(0);
        expect(range?.low).toBeLessThan(range?.high as number);
        expect(range?.high).toBeGreaterThan(v * 0.3);
        expect(range?.low).toBeLessThan(v * 3);
      }
    }
    const text = await runCli(predictArgs.filter((a) => a !== '--json').concat(['--gpu', 'A100-80GB', '--engine', 'vllm-v0']));
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/\d+\.\d\d \(\d+\.\d\d–\d+\.\d\d\)/);
    expect(text.stdout).toMatch(/80% prediction intervals from leave-one-table-out residuals/);
    // --interval-level 0: no intervals; a bad level is a usage error.
    const none = await predictStages(['--interval-level', '0']);
    expect(none[0]?.predictionIntervals).toBeUndefined();
    const bad = await runCli([...predictArgs, '--interval-level', '120']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--interval-level 120 is not a percent/);
  }, 120_000);

  it('widens the intervals for a GPU and for a model family that no published table covers', async () => {
    const [known] = await predictStages(['--gpu', 'A100-80GB', '--model', 'Qwen2-7B-Instruct']);
    const [gpu] = await predictStages(['--catalog', catalog, '--gpu', 'Madeup-X1', '--model', 'Qwen2-7B-Instruct']);
    const [family] = await predictStages(['--catalog', catalog, '--gpu', 'A100-80GB', '--model', 'Zeta-7B']);
    expect(known?.predictionIntervals?.unseen).toBeUndefined();
    expect(gpu?.predictionIntervals?.unseen).toEqual(['gpu']);
    expect(family?.predictionIntervals?.unseen).toEqual(['family']);
    // Never narrower (the widest of in-family and out-of-family), and wider over the figures taken together.
    const fields = ['ttftMs', 'itlMs', 'e2eMs', 'outputTokenThroughput'] as const;
    const total = (s: Stage | undefined): number => fields.reduce((a, f) => a * width(s?.predictionIntervals?.[f]), 1);
    for (const f of fields) {
      expect(width(gpu?.predictionIntervals?.[f])).toBeGreaterThanOrEqual(width(known?.predictionIntervals?.[f]));
      expect(width(family?.predictionIntervals?.[f])).toBeGreaterThanOrEqual(width(known?.predictionIntervals?.[f]));
    }
    expect(total(gpu)).toBeGreaterThan(total(known));
    expect(total(family)).toBeGreaterThan(total(known));
  }, 120_000);

  it('predict --profile capacity --json: capacity.interval brackets the answer', async () => {
    const r = await runCli(['predict', '--profile', 'capacity', '--slo', 'ttft:500,itl:50', '--max-seconds', '3', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const cap = (JSON.parse(r.stdout) as { capacity: { feasibleMax: number; interval: { low: number; high: number; level: number } } }).capacity;
    expect(cap.interval.level).toBe(80);
    expect(cap.interval.low).toBeLessThan(cap.feasibleMax);
    expect(cap.interval.high).toBeGreaterThan(cap.feasibleMax);
  }, 120_000);

  it('plan --json: candidates carry capacityInterval; replicas are sized on its pessimistic end, the optimistic count beside', async () => {
    const r = await runCli(['plan', '--model', 'Qwen2-7B-Instruct', '--gpu', 'A100-80GB', '--tp', '1', '--quant', 'fp16', '--engine', 'vllm',
      '--rate', '30', '--slo', 'ttft:500,itl:50', '--max-seconds', '3', '--threads', '1', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout) as { candidates: Array<{ status: string; capacityPerReplica: number; replicas: number; replicasOptimistic: number; replicasAtPrediction: number; capacityInterval: { low: number; high: number; level: number } }> };
    const c = plan.candidates[0];
    expect(c?.status).toBe('feasible');
    expect(c?.capacityInterval.level).toBe(80);
    expect(c?.capacityInterval.low).toBeLessThan(c?.capacityPerReplica as number);
    expect(c?.capacityInterval.high).toBeGreaterThan(c?.capacityPerReplica as number);
    expect(c?.replicas).toBeGreaterThanOrEqual(Math.ceil(30 / (c?.capacityInterval.low as number)));
    expect(c?.replicasOptimistic).toBe(Math.ceil(30 / (c?.capacityInterval.high as number)));
    expect(c?.replicasAtPrediction).toBe(Math.ceil(30 / (c?.capacityPerReplica as number)));
    expect(c?.replicasOptimistic).toBeLessThanOrEqual(c?.replicas as number);
  }, 180_000);
});
