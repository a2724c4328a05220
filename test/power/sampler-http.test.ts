/**
 * The power sampler against exporters of known power over real HTTP: joules over a window within 1% of the truth
 * (constant, stepped, a counter that resets, trtllm's total), and a window the readings do not cover is flagged
 * invalid with no per-token figure.
 */
import { performance } from 'node:perf_hooks';
import { describe, it, type TestContext } from 'vitest';
import { PowerSampler } from '../../src/power/sampler.js';
import { stageSummarySchema, type StageSummary } from '../../src/results/stage.js';
import { sleep, startDcgmExporter, startTrtllmExporter, truthJoules, type Exporter } from './exporters.js';

type Ctx = Pick<TestContext, 'expect' | 'onTestFinished'>;

/** An exporter closed when the test that started it ends (the tests run at once: each owns its exporter). */
function owned(ctx: Ctx, e: Exporter): Exporter {
  ctx.onTestFinished(() => e.close());
  return e;
}

/** A row whose window is [fromMs, toMs] and which generated 1,000 output tokens (50 requests, 3,000 tokens in all) in it. */
function row(fromMs: number, toMs: number): StageSummary {
  const s = (toMs - fromMs) / 1000;
  return stageSummarySchema.parse({
    index: 0, label: 'test', kind: 'open', durationS: s,
    window: { rule: 'steady', startS: 0, lengthS: s, fromMs, toMs },
    requests: { total: 50, ok: 50 },
    requestThroughput: 50 / s, outputTokenThroughput: 1000 / s, totalTokenThroughput: 3000 / s,
  });
}

/** A sampler started on `url` (stopped when the test ends). */
async function started(ctx: Ctx, url: string, kind: 'dcgm' | 'trtllm' = 'dcgm', gpus?: number[]): Promise<PowerSampler> {
  const s = new PowerSampler({ kind, url }, gpus ? { gpus } : {});
  ctx.onTestFinished(() => s.stop());
  ctx.expect((await s.start()).ok).toBe(true);
  return s;
}

async function sampleThrough(ctx: Ctx, url: string, ms: number, kind: 'dcgm' | 'trtllm' = 'dcgm', gpus?: number[]): Promise<PowerSampler> {
  const s = await started(ctx, url, kind, gpus);
  await sleep(ms);
  return s;
}

// The tests run at once (each with its own exporter on its own port and its own sampler): they spend their time
// waiting for readings, so the file takes as long as its longest test, not the sum of them.
describe.concurrent('power sampler over HTTP', () => {
  it('constant power on two GPUs: joules, watts and per-token figures of the window', async (ctx) => {
    const { expect } = ctx;
    const exporter = owned(ctx, await startDcgmExporter({ gpus: 2, watts: (_t, g) => (g === 0 ? 300 : 200) }));
    // --power-gpus 1: a second sampler on the same exporter, reading beside the first, counts only that GPU.
    const one = await started(ctx, exporter.url, 'dcgm', [1]);
    const t0 = performance.now();
    const s = await sampleThrough(ctx, exporter.url, 1800);
    const from = t0 + 300;
    const to = t0 + 1500;
    const e = s.energyOf(row(from, to));
    const truth = 500 * 1.2;
    expect(e?.valid).toBe(true);
    expect(e?.gpus).toEqual([0, 1]);
    expect(Math.abs((e?.joules ?? 0) - truth) / truth).toBeLessThan(0.01);
    expect(e?.avgWatts).toBeCloseTo(500, 0);
    expect((e?.joulesPerOutputToken ?? 0) / (truth / 1000)).toBeCloseTo(1, 1);
    expect(e?.joulesPerRequest).toBeCloseTo((e?.joules ?? 0) / 50, 6);
    expect(e?.joulesPerTotalToken).toBeCloseTo((e?.joules ?? 0) / 3000, 6);
    expect(e?.source).toBe(`dcgm:${exporter.url}`);
    expect(s.joulesBetween(from, to).joules).toBeGreaterThan(0);
    const now = performance.now();
    const j = one.joulesBetween(now - 900, now - 100);
    one.stop();
    expect(Math.abs(j.joules - 200 * 0.8) / 160).toBeLessThan(0.01);
    expect(j.gpus).toEqual([1]);
  });

  it('stepped power (200 W, a 1 s ramp, 500 W): trapezoids within 1% of the exact integral', async (ctx) => {
    const { expect } = ctx;
    const t0 = performance.now();
    const watts = (t: number): number => (t < t0 + 600 ? 200 : t < t0 + 1600 ? 200 + (300 * (t - t0 - 600)) / 1000 : 500);
    const exporter = owned(ctx, await startDcgmExporter({ gpus: 1, watts: (t) => watts(t) }));
    const s = await sampleThrough(ctx, exporter.url, 2600);
    const from = t0 + 300;
    const to = t0 + 2300;
    const truth = truthJoules(watts, from, to);
    const e = s.energyOf(row(from, to));
    expect(e?.valid).toBe(true);
    expect(Math.abs((e?.joules ?? 0) - truth) / truth).toBeLessThan(0.01);
  });

  it('an energy counter that resets: the reset interval comes from the power gauge, joules within 1%', async (ctx) => {
    const { expect } = ctx;
    const t0 = performance.now();
    const resetAt = t0 + 900;
    // 400 W throughout; the counter counts from t0, drops to 0 at resetAt and counts again.
    const exporter = owned(ctx, await startDcgmExporter({ gpus: 1, watts: () => 400, energyJ: (t) => (t < resetAt ? 5000 + (400 * (t - t0)) / 1000 : (400 * (t - resetAt)) / 1000) }));
    const s = await sampleThrough(ctx, exporter.url, 1900);
    const from = t0 + 300;
    const to = t0 + 1600;
    const e = s.energyOf(row(from, to));
    expect(e?.valid).toBe(true);
    expect(Math.abs((e?.joules ?? 0) - 400 * 1.3) / (400 * 1.3)).toBeLessThan(0.01);
  });

  it('a gap of 1.5 s in the readings: the window is invalid, says why, and has no per-token figure', async (ctx) => {
    const { expect } = ctx;
    const t0 = performance.now();
    const exporter = owned(ctx, await startDcgmExporter({ gpus: 1, watts: () => 250, down: (t) => t > t0 + 500 && t < t0 + 2000 }));
    const s = await sampleThrough(ctx, exporter.url, 2500);
    const e = s.energyOf(row(t0 + 200, t0 + 2300));
    expect(e?.valid).toBe(false);
    expect(e?.reason).toMatch(/gap of 1\.\d\d s between power readings/);
    expect(e?.reason).toMatch(/covered \d+\.\d% of the window/);
    expect(e?.coverage).toBeLessThan(0.9);
    expect(e?.joulesPerOutputToken).toBeUndefined();
    expect(e?.joulesPerRequest).toBeUndefined();
    expect(e?.joulesPerTotalToken).toBeUndefined();
    expect(e?.joules).toBeGreaterThan(0);
  });

  it("trtllm-serve's /energy_metrics: one total for all GPUs, its increase over the window", async (ctx) => {
    const { expect } = ctx;
    const t0 = performance.now();
    const exporter = owned(ctx, await startTrtllmExporter((t) => 10_000 + (650 * (t - t0)) / 1000));
    const s = await sampleThrough(ctx, exporter.url, 1500, 'trtllm');
    const e = s.energyOf(row(t0 + 300, t0 + 1200));
    expect(e?.valid).toBe(true);
    expect(e?.gpus).toEqual([]);
    expect(Math.abs((e?.joules ?? 0) - 650 * 0.9) / (650 * 0.9)).toBeLessThan(0.01);
  });

  it('a GPU asked for that the source never reports: invalid, naming it', async (ctx) => {
    const { expect } = ctx;
    const exporter = owned(ctx, await startDcgmExporter({ gpus: 1, watts: () => 100 }));
    const t0 = performance.now();
    const s = await sampleThrough(ctx, exporter.url, 900, 'dcgm', [0, 3]);
    const e = s.energyOf(row(t0 + 200, t0 + 700));
    expect(e?.valid).toBe(false);
    expect(e?.reason).toMatch(/no power readings for GPU 3 \(the source reported 0\)/);
  });
});
