import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDialect } from '../../src/dialects/index.js';
import { createHttpStageRunner } from '../../src/load/http-runner.js';
import { DEFAULT_BURST_REQUESTS, windowRulesFor } from '../../src/load/profiles.js';
import type { ShardSpec } from '../../src/load/shard.js';
import type { StageResult, StageSpec } from '../../src/load/types.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { startSimServer, type SimServer } from '../../src/sim/server/index.js';
import { createVirtualStageRunner } from '../../src/sim/virtual-runner.js';
import { HttpTarget } from '../../src/transport/http.js';
import { createWorkload } from '../../src/workload/create.js';
import { loadApproxTokenizer } from '../../src/workload/tokenizer.js';
import type { Workload } from '../../src/workload/types.js';

/**
 * issue 30 item 2: `predict` and `run` share one load driver (load/stage-driver.ts) on two clocks, so the same row
 * predicted in virtual time and run against `inferbench sim` over HTTP sends the same requests: the same ids, the same
 * prompts (lengths), at the same scheduled times (computed from the row's start, never measured), and takes the same
 * window decisions where they do not depend on how fast the server answers. Only such deterministic things are
 * asserted; the rows are short (≤ 12 requests of 4 tokens) so the real runs take well under a second each.
 */
const ENGINE = { engine: 'vllm', model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1 } as const;
const RUN_SEED = 7;
const FIRST_ID = 100;

interface Sent {
  id: number;
  promptTokens: number;
  /** Scheduled (intended) send time from the row's start; undefined for closed loops (a stream sends when its last request ended). */
  scheduledMs?: number;
  measured: boolean;
  cooldown: boolean;
}

function sentOf(result: StageResult, records: RequestRecord[]): Sent[] {
  return records
    .map((r) => ({
      id: r.id,
      promptTokens: r.requestedPromptTokens as number,
      ...(result.spec.kind !== 'closed' ? { scheduledMs: Math.round((r.scheduledAtMs - result.startedAtMs) * 1e6) / 1e6 } : {}),
      measured: !r.warmup,
      cooldown: r.cooldown === true,
    }))
    .sort((a, b) => a.id - b.id);
}

describe('one load driver: a row predicted in virtual time sends what the same row sends to the simulator over HTTP', () => {
  let sim: SimServer;
  let workload: Workload;
  beforeAll(async () => {
    sim = await startSimServer({ ...ENGINE, seed: 3 });
    // Prompt lengths differ item by item, so the same lengths mean the same workload items.
    workload = await createWorkload(
      { kind: 'synthetic', prompt: { kind: 'uniform', min: 8, max: 64 }, output: { kind: 'fixed', value: 4 } },
      { tokenizer: await loadApproxTokenizer(), seed: 5 },
    );
  });
  afterAll(async () => sim.close());

  async function both(spec: StageSpec, shard?: ShardSpec): Promise<{ virtual: Sent[]; real: Sent[]; v: StageResult; r: StageResult }> {
    const virtualRunner = createVirtualStageRunner({ ...ENGINE, seed: 3 }, { seed: RUN_SEED, ...(shard ? { shard } : {}) });
    const v = await virtualRunner.runStage(spec, 1, FIRST_ID);
    const target = new HttpTarget({ baseUrl: sim.url, connections: 16 });
    const records: RequestRecord[] = [];
    const realRunner = createHttpStageRunner({
      target, dialect: getDialect('openai-completions'), model: ENGINE.model, forceLength: true, stream: true, seed: RUN_SEED,
      onRecord: (rec) => records.push(rec), ...(shard ? { shard } : {}),
    });
    const r = await realRunner.runStage(spec, 1, FIRST_ID);
    await target.close();
    // What the cool-down still had in flight once the measured requests ended is cancelled; the rest succeeds.
    expect(records.filter((rec) => !rec.cooldown).every((rec) => rec.status === 'ok')).toBe(true);
    return { virtual: sentOf(v, v.records), real: sentOf(r, records), v, r };
  }

  it('constant rate (a batch of 10): same ids, prompt lengths and scheduled times', async () => {
    const spec: StageSpec = { kind: 'open', arrival: 'constant', rate: 40, label: 'c', limits: { maxRequests: 10 }, workload };
    const { virtual, real } = await both(spec);
    expect(virtual.map((s) => s.id)).toEqual(Array.from({ length: 10 }, (_, i) => FIRST_ID + i));
    expect(real).toEqual(virtual);
    expect(virtual.map((s) => s.scheduledMs)).toEqual(Array.from({ length: 10 }, (_, i) => i * 25));
  });

  it('poisson arrivals draw the same schedule from the run seed', async () => {
    const spec: StageSpec = { kind: 'open', arrival: 'poisson', rate: 40, label: 'p', limits: { maxRequests: 8 }, workload };
    const { virtual, real } = await both(spec);
    expect(virtual).toHaveLength(8);
    expect(real).toEqual(virtual);
  });

  it('concurrent (closed loop of 3, a window of 6 requests): same ids and prompts, the same 6 measured', async () => {
    const limits = { maxRequests: 6 };
    const spec: StageSpec = { kind: 'closed', concurrency: 3, label: 'concurrent@3', limits, workload, window: windowRulesFor('closed', limits) as NonNullable<StageSpec['window']> };
    const { virtual, real, v, r } = await both(spec);
    const measured = (s: Sent[]): Sent[] => s.filter((x) => x.measured);
    expect(measured(virtual).map((s) => s.id)).toEqual([100, 101, 102, 103, 104, 105]);
    expect(measured(real)).toEqual(measured(virtual));
    // The cool-down keeps the 3 streams busy until the measured requests end: how many it sends depends on timing,
    // but they come next, in order, from the same workload items.
    const byId = new Map(virtual.map((s) => [s.id, s]));
    for (const s of real.filter((x) => !x.measured)) {
      expect(s.cooldown).toBe(true);
      if (byId.has(s.id)) expect(s.promptTokens).toBe(byId.get(s.id)?.promptTokens);
    }
    for (const w of [v.window, r.window]) {
      expect(w?.openAtMs).not.toBeNull();
      expect(w?.stoppedEarly).toBeUndefined();
    }
  });

  it('burst (8 requests at once, at most 3 in flight): same ids, prompts, all scheduled at the start', async () => {
    const spec: StageSpec = { kind: 'burst', label: 'all at once', limits: { maxRequests: 8 }, maxConcurrency: 3, workload };
    const { virtual, real, v, r } = await both(spec);
    expect(virtual.map((s) => s.id)).toEqual(Array.from({ length: 8 }, (_, i) => FIRST_ID + i));
    expect(virtual.every((s) => s.scheduledMs === 0 && s.measured)).toBe(true);
    expect(real).toEqual(virtual);
    expect(v.window).toBeUndefined();
    expect(r.window).toBeUndefined();
  });

  it('a burst with no limit sends DEFAULT_BURST_REQUESTS in both (it was 1000 in real time, refused in virtual time)', async () => {
    const spec: StageSpec = { kind: 'burst', label: 'all at once', limits: {}, maxConcurrency: 16, workload };
    const { virtual, real } = await both(spec);
    expect(virtual).toHaveLength(DEFAULT_BURST_REQUESTS);
    expect(real).toEqual(virtual);
  });

  it('shard 1/2 of a constant rate: the odd arrivals, ids local × 2 + 1, the same in both', async () => {
    const spec: StageSpec = { kind: 'open', arrival: 'constant', rate: 40, label: 'c', limits: { maxRequests: 10 }, workload };
    const { virtual, real, v } = await both(spec, { index: 1, count: 2 });
    expect(virtual.map((s) => s.id)).toEqual([201, 203, 205, 207, 209]);
    expect(virtual.map((s) => s.scheduledMs)).toEqual([25, 75, 125, 175, 225]);
    expect(real).toEqual(virtual);
    expect(v.loadShare).toBe(0.5);
    expect(v.records.every((rec) => rec.shard === 1)).toBe(true);
  });
});
