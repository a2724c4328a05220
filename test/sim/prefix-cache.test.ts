import { afterEach, describe, expect, it } from 'vitest';
import { Engine, type BatchSummary, VirtualDriver, resolveSimEngine } from '../../src/sim/index.js';
import { blockHashes, chatTokenIds, completionTokenIds, promptTokenIds } from '../../src/sim/wire/prompt-hash.js';
import { countChat, countPrompt } from '../../src/sim/wire/filler.js';
import type { SimServer } from '../../src/sim/server/index.js';
import { call, sseData, start } from './server-helpers.js';

/** An engine on a virtual clock whose cost model records the prefill tokens of every step. */
function spy(engine: string, over: { kvBlocks?: number; prefixCaching?: boolean } = {}) {
  const r = resolveSimEngine({ engine, model: 'Llama-3.1-8B', gpu: 'A100-80GB', gpus: 1, ...(over.prefixCaching === false ? { prefixCaching: false } : {}) });
  const prefills: number[] = [];
  const real = r.config.cost;
  const cost = Object.create(real) as typeof real;
  cost.stepMs = (b: BatchSummary) => {
    for (let i = 0; i < b.prefillCount; i++) prefills.push(b.prefillTokens[i] as number);
    return real.stepMs(b);
  };
  const driver = new VirtualDriver();
  const eng = new Engine({ ...r.config, cost, ...(over.kvBlocks ? { kvBlocks: over.kvBlocks } : {}) }, driver);
  return { eng, driver, prefills };
}

/** Hashes of a prompt of `n` ids whose first `shared` ids are the same for every `group`. */
function ids(n: number, shared: number, group: number, key: number): number[] {
  return Array.from({ length: n }, (_, i) => (i < shared ? 1_000_000 * (group + 1) + i : 5_000_000 + key * 10_000 + i));
}

function run(eng: Engine, driver: VirtualDriver, prompt: number[], output = 4): { cached: number; ttft: number } {
  const out = { cached: -1, ttft: 0 };
  const t0 = driver.now();
  eng.submit({ promptTokens: prompt.length, maxTokens: output, ignoreEos: true, blockHashes: blockHashes(prompt) }, {
    onPrefillStart: (_at, cached) => {
      out.cached = cached;
    },
    onToken: (i, at) => {
      if (i === 0) out.ttft = at - t0;
    },
    onFinish: () => undefined,
  });
  driver.runWhile(() => true);
  return out;
}

describe('prefix cache (engine)', () => {
  it('a prompt sharing 384 leading tokens prefills only the rest, and the counters say so', () => {
    const { eng, driver, prefills } = spy('vllm');
    const first = run(eng, driver, ids(512, 384, 0, 1));
    const second = run(eng, driver, ids(512, 384, 0, 2));
    const other = run(eng, driver, ids(512, 384, 1, 3));
    expect(first.cached).toBe(0);
    expect(second.cached).toBe(384);
    expect(other.cached).toBe(0);
    expect(prefills).toEqual([512, 128, 512]);
    expect(second.ttft).toBeLessThan(first.ttft * 0.6);
    const s = eng.stats();
    expect(s.prefixCacheQueryTokensTotal).toBe(3 * 512);
    expect(s.prefixCacheHitTokensTotal).toBe(384);
    expect(s.kvCacheUsage).toBe(0); // cached blocks nobody holds count as free
  });

  it('a fully cached prompt still computes its last block (the first output token needs it)', () => {
    const { eng, driver, prefills } = spy('sglang');
    const p = ids(512, 512, 0, 0);
    run(eng, driver, p);
    expect(run(eng, driver, p).cached).toBe(496);
    expect(prefills).toEqual([512, 16]);
  });

  it('is off where the engine has none (vllm-v0, tgi) and with prefixCaching: false', () => {
    for (const [engine, over] of [['vllm-v0', {}], ['tgi', {}], ['vllm', { prefixCaching: false }]] as const) {
      const { eng, driver, prefills } = spy(engine, over);
      run(eng, driver, ids(512, 384, 0, 1));
      expect(run(eng, driver, ids(512, 384, 0, 2)).cached).toBe(0);
      expect(prefills).toEqual([512, 512]);
      expect(eng.stats().prefixCacheQueryTokensTotal).toBe(0);
    }
  });

  it('evicts least recently released blocks within the KV budget, never over capacity', () => {
    // 100 blocks: each 512-token prompt needs 33 with its output; groups 0..3 cannot all stay cached.
    const { eng, driver } = spy('vllm', { kvBlocks: 100 });
    for (let g = 0; g < 4; g++) run(eng, driver, ids(512, 384, g, g));
    expect(eng.stats().kvCacheUsage).toBe(0);
    // Group 3 was released last: still cached. Group 0 was evicted to make room.
    expect(run(eng, driver, ids(512, 384, 3, 10)).cached).toBe(384);
    expect(run(eng, driver, ids(512, 384, 0, 11)).cached).toBe(0);
    // Many concurrent requests under pressure: all finish, usage stays ≤ 1.
    let finished = 0;
    let maxUsage = 0;
    for (let k = 0; k < 20; k++) {
      eng.submit({ promptTokens: 512, maxTokens: 64, ignoreEos: true, blockHashes: blockHashes(ids(512, 384, k % 3, 100 + k)) }, {
        onToken: () => {
          maxUsage = Math.max(maxUsage, eng.stats().kvCacheUsage);
        },
        onFinish: (r) => {
          if (r !== 'abort') finished++;
        },
      });
    }
    driver.runWhile(() => true);
    expect(finished).toBe(20);
    expect(maxUsage).toBeLessThanOrEqual(1);
  });
});

describe('prompt token ids and block hashes', () => {
  it('ids have the length the sim counts, chat and completion alike', () => {
    const messages = [{ role: 'system', content: 'You are a helpful assistant. '.repeat(40) }, { role: 'user', content: 'Tell me a story.' }];
    const counted = countChat(messages);
    expect(counted.ok && chatTokenIds(messages).length).toBe(counted.ok ? counted.tokens : -1);
    const text = 'the quick brown fox '.repeat(100);
    const c = countPrompt(text);
    expect(c.ok && completionTokenIds(text)?.length).toBe(c.ok ? c.tokens : -1);
    expect(promptTokenIds({ input_ids: [1, 2, 3] })).toEqual([1, 2, 3]);
  });

  it('hashes are chained: equal leading blocks hash equal, one changed token changes every later block', () => {
    const a = Array.from({ length: 80 }, (_, i) => i);
    const b = a.slice();
    b[40] = 999;
    const ha = blockHashes(a);
    const hb = blockHashes(b);
    expect(ha).toHaveLength(5);
    expect(hb.slice(0, 2)).toEqual(ha.slice(0, 2));
    for (let i = 2; i < 5; i++) expect(hb[i]).not.toBe(ha[i]);
    expect(blockHashes(a.slice(0, 15))).toEqual([]);
  });
});

describe('prefix cache over HTTP', () => {
  let server: SimServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const system = 'Answer as briefly as you can, and always cite the page you read it on. '.repeat(30);
  const chat = (user: string) => ({ model: 'Llama-3.1-8B', messages: [{ role: 'system', content: system }, { role: 'user', content: user }], max_tokens: 4, stream: true, stream_options: { include_usage: true } });
  const usageOf = (text: string): { prompt_tokens: number; prompt_tokens_details?: { cached_tokens: number } } =>
    (JSON.parse(sseData(text).slice(-2)[0] as string) as { usage: { prompt_tokens: number; prompt_tokens_details?: { cached_tokens: number } } }).usage;

  it('vLLM: the second request with the same system prompt reports cached tokens and counts hits in /metrics', async () => {
    server = await start('vllm', { promptTokensDetails: true });
    const a = usageOf((await call(server, 'POST', '/v1/chat/completions', chat('First question?'))).text);
    const b = usageOf((await call(server, 'POST', '/v1/chat/completions', chat('Second, different question?'))).text);
    expect(a.prompt_tokens_details?.cached_tokens).toBe(0);
    const shared = Math.floor((1 + 4 + (a.prompt_tokens - 1 - 4 - 4 - 10)) / 16) * 16; // BOS + header + system text
    expect(b.prompt_tokens_details?.cached_tokens).toBeGreaterThanOrEqual(shared - 32);
    expect(b.prompt_tokens_details?.cached_tokens).toBeLessThan(b.prompt_tokens);
    const metrics = (await call(server, 'GET', '/metrics')).text;
    const hits = Number(/vllm:prefix_cache_hits_total\{[^}]*\} (\S+)/.exec(metrics)?.[1]);
    const queries = Number(/vllm:prefix_cache_queries_total\{[^}]*\} (\S+)/.exec(metrics)?.[1]);
    expect(hits).toBe(b.prompt_tokens_details?.cached_tokens);
    expect(queries).toBe(a.prompt_tokens + b.prompt_tokens);
    const [ra, rb] = server.truth.finished(0);
    expect(rb?.cachedTokens).toBe(hits);
    // The cached part is not prefilled again.
    const prefill = (r: typeof ra): number => (r?.prefillEndMs ?? 0) - (r?.prefillStartMs ?? 0);
    expect(prefill(rb)).toBeLessThan(prefill(ra));
  });

  it('vLLM without --enable-prompt-tokens-details keeps its usage bytes; --no-prefix-caching drops the counters', async () => {
    server = await start('vllm');
    await call(server, 'POST', '/v1/chat/completions', chat('One?'));
    const b = usageOf((await call(server, 'POST', '/v1/chat/completions', chat('Two?'))).text);
    expect(b.prompt_tokens_details).toBeUndefined();
    expect((await call(server, 'GET', '/metrics')).text).toMatch(/vllm:prefix_cache_hits_total\{[^}]*\} [1-9]/);
    await server.close();
    server = await start('vllm', { prefixCaching: false });
    await call(server, 'POST', '/v1/chat/completions', chat('One?'));
    await call(server, 'POST', '/v1/chat/completions', chat('Two?'));
    expect((await call(server, 'GET', '/metrics')).text).not.toContain('prefix_cache');
    expect(server.truth.finished(0)[1]?.cachedTokens).toBeUndefined();
  });

  it('SGLang: native meta_info.cached_tokens and the cache_hit_rate gauge', async () => {
    server = await start('sglang');
    const body = (q: string) => ({ text: system + q, sampling_params: { max_new_tokens: 3 } });
    const meta = async (q: string): Promise<{ cached_tokens: number; prompt_tokens: number }> =>
      (JSON.parse((await call(server as SimServer, 'POST', '/generate', body(q))).text) as { meta_info: { cached_tokens: number; prompt_tokens: number } }).meta_info;
    expect((await meta(' first')).cached_tokens).toBe(0);
    const m = await meta(' second');
    expect(m.cached_tokens).toBeGreaterThan(0);
    expect(m.cached_tokens % 16).toBe(0);
    const rate = Number(/sglang:cache_hit_rate\{[^}]*\} (\S+)/.exec((await call(server, 'GET', '/metrics')).text)?.[1]);
    expect(rate).toBeCloseTo(m.cached_tokens / (2 * m.prompt_tokens), 6);
  });
});
