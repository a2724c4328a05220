import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { RealTimeDriver, createSimEngine } from '../../src/sim/index.js';

describe('RealTimeDriver', () => {
  it('delivers a short real burst in order and never before the planned time', async () => {
    const driver = new RealTimeDriver();
    // Scaled down: ~0.1–0.5 ms steps, so 20 requests x 10 tokens take well under a second of wall time.
    const eng = createSimEngine({ engine: 'vllm', model: 'Qwen2-7B-Instruct', gpu: 'H100', gpus: 1, modelTimeScale: 0.02 }, driver);
    const seen: { i: number; planned: number; wall: number }[][] = [];
    const done: Promise<string>[] = [];
    for (let r = 0; r < 20; r++) {
      const toks: { i: number; planned: number; wall: number }[] = [];
      seen.push(toks);
      done.push(new Promise((resolve) => {
        eng.submit({ promptTokens: 64, maxTokens: 10, ignoreEos: true }, {
          onToken: (i, at) => toks.push({ i, planned: at, wall: performance.now() }),
          onFinish: (reason) => resolve(reason),
        });
      }));
    }
    const reasons = await Promise.all(done);
    expect(reasons.every((x) => x === 'length')).toBe(true);
    for (const toks of seen) {
      expect(toks.map((t) => t.i)).toEqual([...Array(10).keys()]);
      for (const t of toks) expect(t.wall).toBeGreaterThanOrEqual(t.planned - 1e-6);
      for (let k = 1; k < toks.length; k++) expect((toks[k] as { planned: number }).planned).toBeGreaterThanOrEqual((toks[k - 1] as { planned: number }).planned);
    }
    const p = driver.pacing();
    expect(p.events).toBeGreaterThan(10);
    expect(p.errors).toBe(0);
    driver.close();
  });

  it('a new arrival pokes a driver sleeping toward a later event; speed maps virtual to wall time', async () => {
    const driver = new RealTimeDriver({ speed: 10 });
    const t0 = driver.now();
    const order: string[] = [];
    const late = new Promise<void>((r) => driver.schedule(t0 + 2000, () => { order.push('late'); r(); })); // 200 ms wall
    await new Promise((r) => setTimeout(r, 5));
    const early = new Promise<number>((r) => driver.schedule(driver.now() + 100, () => { order.push('early'); r(performance.now()); }));
    const wallEarly = await early;
    expect(order).toEqual(['early']);
    expect(wallEarly).toBeGreaterThanOrEqual(driver.toWallMs(t0) + 0); // sanity: same epoch
    await late;
    expect(order).toEqual(['early', 'late']);
    expect(driver.now()).toBeGreaterThanOrEqual(t0 + 2000);
    driver.close();
  });
});
