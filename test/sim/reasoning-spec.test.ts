import { afterEach, describe, expect, it } from 'vitest';
import { Engine, VirtualDriver, resolveSimEngine } from '../../src/sim/index.js';
import { continuationProbability, parseSpecDecode } from '../../src/sim/engine/spec-decode.js';
import type { SimServer } from '../../src/sim/server/index.js';
import { call, sseData, start } from './server-helpers.js';

let server: SimServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Chunk = { choices: { delta?: { content?: string | null; reasoning_content?: string | null } }[]; usage?: { completion_tokens: number; reasoning_tokens?: number } };
const chunks = (text: string): Chunk[] => sseData(text).filter((d) => d !== '[DONE]').map((d) => JSON.parse(d) as Chunk);
const words = (s: string): number => s.split(' ').filter((w) => w !== '').length;

describe('--reasoning-tokens', () => {
  const body = { messages: [{ role: 'user', content: 'Why?' }], max_tokens: 20, ignore_eos: true, stream: true, stream_options: { include_usage: true } };

  it('vLLM chat: the reasoning phase in delta.reasoning_content, then the answer; usage counts both', async () => {
    server = await start('vllm', { reasoningTokens: { kind: 'fixed', value: 6 } });
    const cs = chunks((await call(server, 'POST', '/v1/chat/completions', body)).text);
    const reasoning = cs.map((c) => c.choices[0]?.delta?.reasoning_content ?? '').join('');
    const answer = cs.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(words(reasoning)).toBe(6);
    expect(words(answer)).toBe(14);
    expect(cs.at(-1)?.usage?.completion_tokens).toBe(20);
    // Non-streaming: message.reasoning_content and content.
    const whole = JSON.parse((await call(server, 'POST', '/v1/chat/completions', { ...body, stream: false, stream_options: undefined })).text) as { choices: { message: { content: string; reasoning_content: string } }[] };
    expect(words(whole.choices[0]?.message.reasoning_content ?? '')).toBe(6);
    expect(words(whole.choices[0]?.message.content ?? '')).toBe(14);
  });

  it('max_tokens bounds reasoning and answer together; without ignore_eos the answer comes after the reasoning', async () => {
    server = await start('sglang', { reasoningTokens: { kind: 'fixed', value: 50 } });
    const cs = chunks((await call(server, 'POST', '/v1/chat/completions', { ...body, model: 'x' })).text);
    expect(cs.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('');
    expect(cs.at(-1)?.usage).toMatchObject({ completion_tokens: 20, reasoning_tokens: 20 });
    const free = chunks((await call(server, 'POST', '/v1/chat/completions', { ...body, model: 'x', ignore_eos: false, max_tokens: 4000 })).text);
    const u = free.at(-1)?.usage;
    expect(u?.reasoning_tokens).toBe(50);
    expect(u?.completion_tokens).toBeGreaterThan(50);
  });

  it('engines without a parser keep it inline: vLLM /v1/completions text has <think>…</think>', async () => {
    server = await start('vllm', { reasoningTokens: { kind: 'fixed', value: 4 } });
    const r = JSON.parse((await call(server, 'POST', '/v1/completions', { prompt: 'Hi', max_tokens: 8, ignore_eos: true })).text) as { choices: { text: string }[] };
    expect(r.choices[0]?.text).toMatch(/^<think> \w+ \w+<\/think>( \w+){4}$/);
  });

  it('Ollama: message.thinking', async () => {
    server = await start('ollama', { reasoningTokens: { kind: 'fixed', value: 3 } });
    const lines = (await call(server, 'POST', '/api/chat', { model: 'Llama-3.1-8B', messages: [{ role: 'user', content: 'Hi' }], options: { num_predict: 6 } })).text.trim().split('\n').map((l) => JSON.parse(l) as { message: { content: string; thinking?: string } });
    expect(words(lines.map((l) => l.message.thinking ?? '').join(''))).toBe(3);
  });
});

describe('--spec-decode', () => {
  it('parses K:ACCEPT and refuses anything else with one line', () => {
    expect(parseSpecDecode('4:0.7')).toEqual({ k: 4, accept: 0.7 });
    expect(() => parseSpecDecode('0.7')).toThrow(/K:ACCEPT/);
    expect(() => parseSpecDecode('4:1.5')).toThrow(/K:ACCEPT/);
  });

  it('the per-draft probability makes accepted/draft equal the rate asked for', () => {
    const q = continuationProbability({ k: 4, accept: 0.7 });
    expect(q + q ** 2 + q ** 3 + q ** 4).toBeCloseTo(2.8, 9);
  });

  it('multi-token steps: fewer steps, each dearer, counters at the rate told (within 2%)', () => {
    const r = resolveSimEngine({ engine: 'vllm', model: 'Llama-3.1-8B', gpu: 'A100-80GB', gpus: 1 });
    const runOne = (spec: boolean) => {
      const driver = new VirtualDriver();
      const eng = new Engine({ ...r.config, ...(spec ? { specDecode: { k: 4, accept: 0.7 } } : {}) }, driver);
      let last = 0;
      let tokens = 0;
      for (let i = 0; i < 16; i++) eng.submit({ promptTokens: 128, maxTokens: 400, ignoreEos: true }, { onToken: (_i, at) => { tokens++; last = at; }, onFinish: () => undefined });
      driver.runWhile(() => true);
      return { tokens, last, stats: eng.stats() };
    };
    const plain = runOne(false);
    const spec = runOne(true);
    expect(spec.tokens).toBe(16 * 400);
    expect(spec.stats.stepsTotal).toBeLessThan(plain.stats.stepsTotal / 2);
    expect(spec.last).toBeLessThan(plain.last);
    const rate = spec.stats.specAcceptedTokensTotal / spec.stats.specDraftTokensTotal;
    expect(Math.abs(rate - 0.7)).toBeLessThan(0.014);
    expect(plain.stats.specDraftTokensTotal).toBe(0);
  });

  it('vLLM over HTTP: several tokens per SSE chunk and the spec_decode counters', async () => {
    server = await start('vllm', { specDecode: { k: 3, accept: 0.8 } });
    const cs = chunks((await call(server, 'POST', '/v1/completions', { prompt: 'Hi', max_tokens: 60, ignore_eos: true, stream: true, stream_options: { include_usage: true } })).text);
    const texts = cs.filter((c) => c.choices.length > 0).map((c) => (c.choices[0] as unknown as { text: string }).text);
    expect(texts.join('').split(' ').length - 1).toBe(60);
    expect(texts.length).toBeLessThan(45);
    expect(Math.max(...texts.map(words))).toBeGreaterThan(1);
    const m = (await call(server, 'GET', '/metrics')).text;
    const draft = Number(/vllm:spec_decode_num_draft_tokens_total\{[^}]*\} (\S+)/.exec(m)?.[1]);
    const accepted = Number(/vllm:spec_decode_num_accepted_tokens_total\{[^}]*\} (\S+)/.exec(m)?.[1]);
    expect(draft % 3).toBe(0);
    expect(accepted).toBeGreaterThan(0);
    expect(accepted).toBeLessThanOrEqual(draft);
  });
});
