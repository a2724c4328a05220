import { describe, expect, it } from 'vitest';
import {
  Engine, type BatchSummary, type EngineConfig, VirtualDriver, createSimEngine, resolveSimEngine,
} from '../../src/sim/index.js';
import type { SimRequestListener } from '../../src/sim/types.js';

interface Trace {
  tokens: number[];
  times: number[];
  finish?: string;
  preempted: number;
}

function listener(tr: Trace): SimRequestListener {
  return {
    onToken: (i, at) => {
      tr.tokens.push(i);
      tr.times.push(at);
    },
    onFinish: (r) => {
      tr.finish = r;
    },
    onPreempt: () => {
      tr.preempted++;
    },
  };
}

/** An engine whose cost model records every batch it is asked to price. */
function spyEngine(engine: string, model: string, gpu: string, gpus: number, over: Partial<EngineConfig> = {}) {
  const r = resolveSimEngine({ engine, model, gpu, gpus });
  const batches: BatchSummary[] = [];
  const real = r.config.cost;
  const cost = Object.create(real) as typeof real;
  cost.stepMs = (b: BatchSummary) => {
    batches.push({ ...b, prefillTokens: b.prefillTokens.slice(0, b.prefillCount), prefillPrior: b.prefillPrior.slice(0, b.prefillCount) });
    return real.stepMs(b);
  };
  const driver = new VirtualDriver();
  const eng = new Engine({ ...r.config, cost, ...over }, driver);
  return { eng, driver, batches, config: r.config };
}

function submitMany(eng: Engine, n: number, prompt: number, output: number): Trace[] {
  const out: Trace[] = [];
  for (let i = 0; i < n; i++) {
    const tr: Trace = { tokens: [], times: [], preempted: 0 };
    eng.submit({ promptTokens: prompt, maxTokens: output, ignoreEos: true }, listener(tr));
    out.push(tr);
  }
  return out;
}

describe('engine', () => {
  it('vLLM 0.2 under KV pressure: never over capacity, preempts, and every request still finishes in order', () => {
    const { eng, driver } = spyEngine('vllm-0.2', 'Qwen-14B', 'A100-40GB', 1);
    const traces = submitMany(eng, 120, 512, 512);
    let maxUsage = 0;
    while (driver.pending > 0) {
      driver.runWhile(() => true);
      maxUsage = Math.max(maxUsage, eng.stats().kvCacheUsage);
    }
    // check at every step too
    const { eng: e2, driver: d2 } = spyEngine('vllm-0.2', 'Qwen-14B', 'A100-40GB', 1);
    submitMany(e2, 120, 512, 512);
    let over = 0;
    d2.runWhile(() => {
      if (e2.stats().kvCacheUsage > 1) over++;
      return true;
    });
    expect(over).toBe(0);
    expect(maxUsage).toBeLessThanOrEqual(1);
    const st = eng.stats();
    expect(st.preemptionsTotal).toBeGreaterThan(0);
    expect(st.requestsFinishedTotal).toBe(120);
    expect(st.running + st.waiting).toBe(0);
    expect(st.kvCacheUsage).toBe(0);
    for (const t of traces) {
      expect(t.finish).toBe('length');
      expect(t.tokens).toEqual(Array.from({ length: 512 }, (_, i) => i));
      for (let i = 1; i < t.times.length; i++) expect(t.times[i]).toBeGreaterThanOrEqual(t.times[i - 1] as number);
    }
    expect(traces.some((t) => t.preempted > 0)).toBe(true);
  });

  it('vLLM 0.2 never mixes prefill and decode in one step and respects the padded budget', () => {
    const { eng, driver, batches, config } = spyEngine('vllm-0.2', 'chatglm3-6b', 'A100-40GB', 1);
    submitMany(eng, 300, 700, 16);
    driver.run();
    for (const b of batches) {
      expect(b.prefillCount === 0 || b.decodeSeqs === 0).toBe(true);
      const longest = Math.max(0, ...b.prefillTokens);
      expect(longest * b.prefillCount).toBeLessThanOrEqual(config.maxNumBatchedTokens);
      expect(b.decodeSeqs).toBeLessThanOrEqual(256);
    }
  });

  it('vLLM V1 chunked prefill keeps every step within the token budget and mixes decodes in', () => {
    const { eng, driver, batches, config } = spyEngine('vllm-v1', 'Llama-3-8B', 'A100-80GB', 1);
    expect(config.maxNumBatchedTokens).toBe(2048);
    submitMany(eng, 64, 3000, 64);
    driver.run();
    let mixed = 0;
    let chunked = 0;
    for (const b of batches) {
      const tokens = b.decodeSeqs + b.prefillTokens.reduce((a, x) => a + x, 0);
      expect(tokens).toBeLessThanOrEqual(2048);
      if (b.decodeSeqs > 0 && b.prefillCount > 0) mixed++;
      if (b.prefillPrior.some((p) => p > 0)) chunked++;
    }
    expect(mixed).toBeGreaterThan(0);
    expect(chunked).toBeGreaterThan(0);
    expect(eng.stats().requestsFinishedTotal).toBe(64);
  });

  it('V1 preempts under pressure and recovers', () => {
    const { eng, driver } = spyEngine('vllm-v1', 'Qwen-14B', 'A100-40GB', 1);
    const traces = submitMany(eng, 60, 256, 1024);
    driver.run();
    expect(eng.stats().preemptionsTotal).toBeGreaterThan(0);
    expect(traces.every((t) => t.tokens.length === 1024 && t.finish === 'length')).toBe(true);
  });

  it('TGI reserves the whole output and so never preempts', () => {
    const { eng, driver } = spyEngine('tgi', 'Qwen-14B', 'A100-40GB', 1);
    const traces = submitMany(eng, 60, 256, 1024);
    driver.run();
    expect(eng.stats().preemptionsTotal).toBe(0);
    expect(traces.every((t) => t.tokens.length === 1024)).toBe(true);
  });

  it('cancel frees the request and reports abort; max_model_len caps generation', () => {
    const driver = new VirtualDriver();
    const eng = createSimEngine({ engine: 'vllm', model: 'Qwen-14B', gpu: 'A100-80GB', gpus: 1 }, driver);
    const a: Trace = { tokens: [], times: [], preempted: 0 };
    const h = eng.submit({ promptTokens: 100, maxTokens: 500, ignoreEos: true }, listener(a));
    const b: Trace = { tokens: [], times: [], preempted: 0 };
    eng.submit({ promptTokens: 2000, maxTokens: 500, ignoreEos: true }, listener(b));
    driver.run(200);
    h.cancel();
    driver.run();
    expect(a.finish).toBe('abort');
    expect(a.tokens.length).toBeLessThan(500);
    expect(b.tokens.length).toBe(48);
    expect(eng.stats().kvCacheUsage).toBe(0);
    expect(() => eng.submit({ promptTokens: 5000, maxTokens: 1, ignoreEos: true }, listener(a))).toThrow(/max_model_len/);
  });

  it('is deterministic under a seed, noise included', () => {
    const run = (seed: number): number[] => {
      const driver = new VirtualDriver();
      const eng = createSimEngine({ engine: 'vllm-v0', model: 'Qwen2-7B-Instruct', gpu: 'L40S', gpus: 1, noise: 0.05, seed }, driver);
      const traces = submitMany(eng, 40, 300, 50);
      driver.run();
      return traces.flatMap((t) => t.times);
    };
    expect(run(7)).toEqual(run(7));
    expect(run(7)).not.toEqual(run(8));
  });

  it('modelTimeScale 0 gives an infinitely fast engine', () => {
    const driver = new VirtualDriver(1000);
    const eng = createSimEngine({ engine: 'vllm', model: 'Qwen2-7B-Instruct', gpu: 'H100', gpus: 1, modelTimeScale: 0 }, driver);
    const traces = submitMany(eng, 10, 100, 20);
    driver.run();
    expect(traces.every((t) => t.times.length === 20 && t.times.every((x) => x === 1000))).toBe(true);
  });

  it('pure roofline is optimistic compared with the calibrated model', () => {
    const sync = (pure: boolean): number => {
      const driver = new VirtualDriver();
      const eng = createSimEngine({ engine: 'vllm-0.2', model: 'chatglm3-6b', gpu: 'A100-40GB', gpus: 1, pureRoofline: pure }, driver);
      const [t] = submitMany(eng, 1, 512, 128);
      driver.run();
      return (t as Trace).times.at(-1) as number;
    };
    expect(sync(true)).toBeLessThan(sync(false) * 0.8);
  });
});
