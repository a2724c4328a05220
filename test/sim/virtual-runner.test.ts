import { describe, expect, it } from 'vitest';
import type { StageSpec } from '../../src/load/types.js';
import { DEFAULT_BURST_REQUESTS, windowRulesFor } from '../../src/load/profiles.js';
import { createVirtualStageRunner } from '../../src/sim/index.js';
import type { Workload } from '../../src/workload/types.js';
import { fixedWorkload } from './helpers.js';

const engine = { engine: 'vllm-v0', model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1 };

describe('virtual stage runner', () => {
  it('synchronous: one at a time, records filled like a real client', async () => {
    const r = createVirtualStageRunner(engine, { seed: 1 });
    const res = await r.runStage({ kind: 'closed', concurrency: 1, label: 'synchronous', limits: { maxRequests: 5 }, workload: fixedWorkload(512, 128) }, 0, 100);
    expect(res.records).toHaveLength(5);
    const [a, b] = res.records;
    expect(a?.id).toBe(100);
    expect(b?.sentAtMs).toBe(a?.endAtMs);
    for (const rec of res.records) {
      expect(rec.status).toBe('ok');
      expect(rec.outputTokens).toBe(128);
      expect(rec.chunks).toBe(128);
      expect(rec.chunkGapsMs).toHaveLength(127);
      expect(rec.ttftMs).toBeCloseTo((rec.firstTokenAtMs as number) - rec.sentAtMs, 9);
      expect(rec.itlMs).toBeCloseTo(((rec.lastTokenAtMs as number) - (rec.firstTokenAtMs as number)) / 127, 9);
      expect(rec.latencyPerOutputTokenMs).toBeCloseTo((rec.e2eMs as number) / 128, 9);
      expect(rec.latencyPerTokenMs).toBeCloseTo((rec.e2eMs as number) / 640, 9);
      expect(rec.tokenCountSource).toBe('server-usage');
      expect(rec.dispatchLagMs).toBe(0);
    }
    expect(a?.ttftMs).toBeGreaterThan(10);
    expect(a?.itlMs).toBeGreaterThan(3);
    expect(a?.itlMs).toBeLessThan(30);
  });

  it('closed loop keeps N in flight; stages follow each other on one timeline', async () => {
    const r = createVirtualStageRunner(engine);
    const s1 = await r.runStage({ kind: 'closed', concurrency: 8, label: 'c8', limits: { maxRequests: 40 }, workload: fixedWorkload(128, 64) }, 0, 0);
    const s2 = await r.runStage({ kind: 'closed', concurrency: 8, label: 'c8', limits: { maxRequests: 40 }, workload: fixedWorkload(128, 64) }, 1, 40);
    expect(s1.records).toHaveLength(40);
    expect(s2.startedAtMs).toBe(s1.endedAtMs);
    expect(s2.records.every((x) => x.stage === 1 && x.sentAtMs >= s2.startedAtMs)).toBe(true);
    expect(s1.records.filter((x) => x.sentAtMs === s1.startedAtMs)).toHaveLength(8);
  });

  it('open loop with a concurrency cap queues on the client side', async () => {
    const r = createVirtualStageRunner(engine, { seed: 3 });
    const res = await r.runStage({
      kind: 'open', rate: 200, arrival: 'poisson', maxConcurrency: 4, label: 'asynchronous@200', limits: { maxRequests: 100 }, workload: fixedWorkload(256, 32),
    }, 0, 0);
    expect(res.records).toHaveLength(100);
    expect(res.records.some((x) => x.dispatchLagMs > 0)).toBe(true);
    for (const x of res.records) {
      expect(x.sentAtMs).toBeGreaterThanOrEqual(x.scheduledAtMs);
      expect(x.queuedE2eMs).toBeCloseTo(x.endAtMs - x.scheduledAtMs, 9);
    }
  });

  it('burst, warm-up and time limit', async () => {
    const r = createVirtualStageRunner(engine);
    const burst = await r.runStage({ kind: 'burst', label: 'throughput', limits: { maxRequests: 300, warmupSeconds: 0.001 }, workload: fixedWorkload(512, 128) }, 0, 0);
    expect(burst.records).toHaveLength(300);
    expect(burst.records.every((x) => x.scheduledAtMs === burst.startedAtMs && x.warmup)).toBe(true);
    const timed = await r.runStage({ kind: 'open', rate: 50, arrival: 'constant', label: 'a', limits: { maxSeconds: 2, warmupSeconds: 0.5 }, workload: fixedWorkload(512, 512) }, 1, 300);
    const warm = timed.records.filter((x) => x.warmup);
    expect(warm.length).toBeGreaterThan(10);
    expect(warm.every((x) => x.sentAtMs - timed.startedAtMs < 500)).toBe(true);
    // Sending stops at maxSeconds; requests in flight then finish (no drain limit given: none is cut).
    expect(Math.max(...timed.records.map((x) => x.sentAtMs)) - timed.startedAtMs).toBeLessThan(2000);
    expect(timed.records.every((x) => x.status === 'ok')).toBe(true);
    expect(timed.endedAtMs - timed.startedAtMs).toBeGreaterThan(2000);

    // A row with no end cannot run in virtual time; a burst with no limit sends DEFAULT_BURST_REQUESTS, as `run` does.
    await expect(r.runStage({ kind: 'open', rate: 1, arrival: 'constant', label: 'x', limits: {}, workload: fixedWorkload(1, 1) }, 2, 0)).rejects.toThrow(/maxRequests/);
    expect((await r.runStage({ kind: 'burst', label: 'x', limits: {}, workload: fixedWorkload(1, 1) }, 2, 0)).records).toHaveLength(DEFAULT_BURST_REQUESTS);
  });

  it('applies run\'s drain limit: measured requests still running --drain after the window closed are cut', async () => {
    const limits = { maxSeconds: 2 };
    const window = windowRulesFor('closed', limits);
    // Staggered lengths (5–26 s of decoding), so the window closes on one completion while longer requests run on.
    const staggered = { ...fixedWorkload(512, 500), item: (i: number) => ({ ...fixedWorkload(512, 500 + (i % 4) * 700).item(i) }) };
    const spec: StageSpec = { kind: 'closed', concurrency: 4, label: 'concurrent@4', limits, workload: staggered, ...(window ? { window } : {}) };
    const drainMessage = "still running 1 s after the row's time limit";
    const cutByDrain = (drainMs?: number) =>
      createVirtualStageRunner(engine, { seed: 1, ...(drainMs !== undefined ? { drainMs } : {}) }).runStage(spec, 0, 0)
        .then((r) => r.records.filter((x) => x.error?.message === drainMessage));
    // With a 1 s drain the measured requests still decoding a second after the window closed are cancelled, saying why.
    const drained = await cutByDrain(1000);
    expect(drained.length).toBeGreaterThan(0);
    expect(drained.every((x) => x.status === 'incomplete')).toBe(true);
    expect(await cutByDrain()).toHaveLength(0);
  });

  it('an 11-stage sweep of hundreds of requests each runs well under a second', async () => {
    const r = createVirtualStageRunner({ engine: 'vllm-v0', model: 'Qwen2-72B-Instruct', gpu: 'L20-48GB', gpus: 4 });
    const wl = fixedWorkload(512, 128);
    const stages: StageSpec[] = [
      { kind: 'closed', concurrency: 1, label: 'synchronous', limits: { maxRequests: 50 }, workload: wl },
      { kind: 'burst', label: 'throughput', limits: { maxRequests: 300 }, workload: wl },
      ...Array.from({ length: 9 }, (_, i): StageSpec => ({
        kind: 'open', arrival: 'poisson', rate: 0.3 + 0.25 * i, label: `asynchronous@${(0.3 + 0.25 * i).toFixed(2)}`,
        limits: { maxRequests: 300 }, workload: wl,
      })),
    ];
    const t0 = performance.now();
    let n = 0;
    for (const [i, s] of stages.entries()) n += (await r.runStage(s, i, n)).records.length;
    const ms = performance.now() - t0;
    expect(n).toBe(50 + 300 * 10);
    // measured ~0.2 s on a 2-core machine; generous bound for loaded CI
    expect(ms).toBeLessThan(3000);
  });
});

describe('virtual stage runner: a closed loop in process', () => {
  it.each(['lmdeploy', 'vllm-v0'])("%s: a stream's next request is sent inside the step that ended its last one, and joins the engine's next step", async (name) => {
    // Two streams, 16 and 48 output tokens: every time the short stream's request ends, the long one is decoding.
    // In process there is no HTTP front (no ingest or egress time), so the next request must be queued before the
    // engine forms its next batch: no step of the running request comes between its send and its first token
    // (mixed batches: they come out together; vLLM V0 runs the prefill alone, first).
    const workload: Workload = {
      description: 'alternating 256/16 and 256/48',
      item: (i) => ({ prompt: '', promptTokens: 256, promptTokenSource: 'client-tokenizer', outputTokens: i % 2 === 0 ? 16 : 48 }),
    };
    const r = createVirtualStageRunner({ ...engine, engine: name, inProcess: true }, { seed: 5 });
    const res = await r.runStage({ kind: 'closed', concurrency: 2, label: 'c2', limits: { maxRequests: 12 }, workload }, 0, 0);
    expect(res.records).toHaveLength(12);
    const tokenTimes = (x: (typeof res.records)[number]): number[] => {
      const times = [x.firstTokenAtMs as number];
      for (const gap of x.chunkGapsMs ?? []) times.push((times.at(-1) as number) + gap);
      return times;
    };
    let checked = 0;
    for (const b of res.records) {
      if (b.sentAtMs === res.startedAtMs) continue;
      // A request running across b's send: its first token time after the send ends the step b had to join.
      const running = res.records.find((c) => c !== b && (c.firstTokenAtMs as number) < b.sentAtMs && c.endAtMs > b.sentAtMs);
      if (!running) continue;
      const nextStepEnd = tokenTimes(running).find((t) => t > b.sentAtMs) as number;
      expect(b.firstTokenAtMs as number).toBeLessThanOrEqual(nextStepEnd + 1e-9);
      if (name === 'lmdeploy') expect(b.firstTokenAtMs).toBeCloseTo(nextStepEnd, 9);
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(4);
  });
});
