import { afterEach, describe, expect, it } from 'vitest';
import { Engine, VirtualDriver, resolveSimEngine, type BatchSummary } from '../src/sim/index.js';
import type { SimServer } from '../src/sim/server/index.js';
import { countPrompt } from '../src/sim/wire/filler.js';
import { call, start } from './sim/server-helpers.js';

const texts = ['the quick brown fox jumps over the lazy dog', 'a second text, a little longer than the first one was', 'third'];
const tokensOf = (t: string): number => (countPrompt(t) as { tokens: number }).tokens;
const norm = (v: number[]): number => Math.sqrt(v.reduce((a, x) => a + x * x, 0));

let server: SimServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('sim /v1/embeddings', () => {
  it('vLLM: one vector per input of the hidden size, usage = Σ the inputs\' counts, prefill only (no token generated)', async () => {
    server = await start('vllm');
    const before = server.engine.stats();
    const r = await call(server, 'POST', '/v1/embeddings', { model: 'Llama-3.1-8B', input: texts, encoding_format: 'float' });
    expect(r.status).toBe(200);
    const body = JSON.parse(r.text) as { id: string; object: string; data: Array<{ index: number; object: string; embedding: number[] }>; usage: Record<string, unknown> };
    const sum = texts.reduce((a, t) => a + tokensOf(t), 0);
    expect(body.id).toMatch(/^embd-[0-9a-f]{32}$/);
    expect(body.usage).toEqual({ prompt_tokens: sum, total_tokens: sum, completion_tokens: 0, prompt_tokens_details: null });
    expect(body.data.map((d) => d.index)).toEqual([0, 1, 2]);
    for (const d of body.data) {
      expect(d.object).toBe('embedding');
      expect(d.embedding).toHaveLength(4096); // Llama-3.1-8B's hidden size
      expect(norm(d.embedding)).toBeCloseTo(1, 2);
    }
    const after = server.engine.stats();
    expect(after.promptTokensTotal - before.promptTokensTotal).toBe(sum);
    expect(after.generationTokensTotal).toBe(before.generationTokensTotal);
    expect(after.requestsFinishedTotal - before.requestsFinishedTotal).toBe(3);
    const truth = server.truth.finished().at(-1);
    expect(truth).toMatchObject({ path: '/v1/embeddings', promptTokens: sum, maxTokens: 0, outcome: 'completed', plannedMs: [] });
    expect(truth?.prefillEndMs).toBeGreaterThanOrEqual(truth?.prefillStartMs ?? Infinity);
    // The same text always gets the same vector; `dimensions` shortens it.
    const again = JSON.parse((await call(server, 'POST', '/v1/embeddings', { input: texts[0], dimensions: 8 })).text) as typeof body;
    expect(again.data[0]?.embedding).toHaveLength(8);
    const twice = JSON.parse((await call(server, 'POST', '/v1/embeddings', { input: [texts[0]] })).text) as typeof body;
    expect(twice.data[0]?.embedding).toEqual(body.data[0]?.embedding);
  });

  it('base64 vectors decode to unit float32 arrays; bad requests get the engine\'s 400s', async () => {
    server = await start('vllm');
    const r = JSON.parse((await call(server, 'POST', '/v1/embeddings', { input: ['x y'], encoding_format: 'base64', dimensions: 16 })).text) as { data: Array<{ embedding: string }> };
    const buf = Buffer.from(r.data[0]?.embedding ?? '', 'base64');
    const f = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
    expect(f).toHaveLength(16);
    expect(norm([...f])).toBeCloseTo(1, 4);
    for (const [body, message] of [
      [{ input: [] }, 'input must be a non-empty string or list'],
      [{ input: ['a'], dimensions: 5000 }, 'dimensions must be a whole number from 1 to 4096'],
      [{ input: ['a'], encoding_format: 'int8' }, 'encoding_format must be float or base64, not "int8"'],
    ] as const) {
      const bad = await call(server, 'POST', '/v1/embeddings', body);
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.text)).toMatchObject({ error: { message, code: 400 } });
    }
    const wrongModel = await call(server, 'POST', '/v1/embeddings', { model: 'other', input: 'a' });
    expect(wrongModel.status).toBe(404);
    const long = await call(server, 'POST', '/v1/embeddings', { input: [Array.from({ length: 200 }, (_, i) => i + 1).concat(Array(200_000).fill(7))] });
    expect(long.status).toBe(400);
    expect(long.text).toContain('in the input for embedding generation');
  });

  it('SGLang and llama.cpp write their own shapes; lmdeploy answers as its api_server does; TGI has no route', async () => {
    server = await start('sglang');
    const s = JSON.parse((await call(server, 'POST', '/v1/embeddings', { input: texts.slice(0, 2) })).text) as Record<string, unknown>;
    expect(Object.keys(s)).toEqual(['data', 'model', 'object', 'usage']);
    expect((s['usage'] as { prompt_tokens: number }).prompt_tokens).toBe(tokensOf(texts[0] as string) + tokensOf(texts[1] as string));
    await server.close();
    server = await start('llamacpp');
    const l = JSON.parse((await call(server, 'POST', '/v1/embeddings', { input: 'hello world' })).text) as Record<string, unknown>;
    expect(Object.keys(l)).toEqual(['model', 'object', 'usage', 'data']);
    expect(l['usage']).toEqual({ prompt_tokens: tokensOf('hello world'), total_tokens: tokensOf('hello world') });
    await server.close();
    server = await start('lmdeploy');
    const m = await call(server, 'POST', '/v1/embeddings', { input: 'hello' });
    expect(m.status).toBe(400);
    expect(JSON.parse(m.text)).toMatchObject({ message: 'Unsupported by turbomind.', object: 'error' });
    await server.close();
    server = await start('tgi');
    expect((await call(server, 'POST', '/v1/embeddings', { input: 'hello' })).status).toBe(404);
  });
});

describe('engine: pooling requests', () => {
  it('are batched with other prefills, run no LM head, and finish at the end of their prefill without a token', () => {
    const r = resolveSimEngine({ engine: 'vllm', model: 'Llama-3.1-8B', gpu: 'A100-80GB', gpus: 1 });
    const batches: BatchSummary[] = [];
    const real = r.config.cost;
    const cost = Object.create(real) as typeof real;
    cost.stepMs = (b: BatchSummary) => {
      batches.push({ ...b, prefillTokens: b.prefillTokens.slice(0, b.prefillCount) });
      return real.stepMs(b);
    };
    const driver = new VirtualDriver();
    const eng = new Engine({ ...r.config, cost, ingestMs: 0 }, driver);
    const seen: Array<{ tokens: number; finish?: string; at?: number; prefillEnd?: number }> = [];
    for (let i = 0; i < 4; i++) {
      const s: (typeof seen)[number] = { tokens: 0 };
      seen.push(s);
      eng.submit({ promptTokens: 300, maxTokens: 0, ignoreEos: true, pooling: true }, {
        onToken: () => void s.tokens++,
        onPrefillEnd: (at) => void (s.prefillEnd = at),
        onFinish: (reason, at) => {
          s.finish = reason;
          s.at = at;
        },
      });
    }
    while (driver.pending > 0) driver.runWhile(() => true);
    // The first starts a step at once; the three that arrive meanwhile share the next one.
    expect(batches.map((b) => b.prefillTokens)).toEqual([[300], [300, 300, 300]]);
    for (const b of batches) expect(b).toMatchObject({ emittingSeqs: 0, decodeSeqs: 0 });
    for (const s of seen) {
      expect(s).toMatchObject({ tokens: 0, finish: 'stop' });
      expect(s.at).toBeGreaterThanOrEqual(s.prefillEnd as number);
    }
    expect(eng.stats()).toMatchObject({ running: 0, waiting: 0, kvCacheUsage: 0, generationTokensTotal: 0, requestsFinishedTotal: 4 });
  });
});
