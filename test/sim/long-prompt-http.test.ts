/** Issue 11 over real HTTP (127.0.0.1, port 0): what `inferbench sim` answers to long prompts. */
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimServer } from '../../src/sim/server/index.js';
import { call, start } from './server-helpers.js';

/** A prompt of exactly `n` o200k tokens plus BOS: " the" is one token. */
const prompt = (n: number): string => 'the' + ' the'.repeat(n - 1);

describe('sim over HTTP: long prompts', () => {
  let server: SimServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('TGI answers a request over max_total_tokens with its 422 validation error, and serves one over 4,096 tokens', async () => {
    server = await start('tgi', { model: 'Qwen2-7B-Instruct', modelTimeScale: 0.01 });
    const info = JSON.parse((await call(server, 'GET', '/info')).text) as { max_total_tokens: number; version: string };
    expect(info.version).toMatch(/^3\./);
    const limit = info.max_total_tokens;
    const over = await call(server, 'POST', '/generate', { inputs: prompt(limit - 50), parameters: { max_new_tokens: 128 } });
    expect(over.status).toBe(422);
    expect(JSON.parse(over.text)).toEqual({
      error: `Input validation error: \`inputs\` tokens + \`max_new_tokens\` must be <= ${limit}. Given: ${limit - 49} \`inputs\` tokens and 128 \`max_new_tokens\``,
      error_type: 'validation',
    });
    const ok = await call(server, 'POST', '/generate', { inputs: prompt(4200), parameters: { max_new_tokens: 32, details: true } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-prompt-tokens')).toBe('4201');
    const body = JSON.parse(ok.text) as { details: { generated_tokens: number } };
    expect(body.details.generated_tokens).toBeGreaterThan(0);
    expect(Number(ok.headers.get('x-inference-time'))).toBeGreaterThan(0);
  });

  it('SGLang answers a prompt over its 8,192-token chunked-prefill size', async () => {
    server = await start('sglang', { model: 'Qwen2-7B-Instruct', modelTimeScale: 0.01 });
    const ac = AbortSignal.timeout(15_000);
    const r = await fetch(`${server.url}/v1/completions`, {
      method: 'POST', signal: ac, headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'Qwen2-7B-Instruct', prompt: prompt(20_000), max_tokens: 16, ignore_eos: true }),
    });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    expect(body.usage).toMatchObject({ prompt_tokens: 20_001, completion_tokens: 16 });
  });

  it('usage counts a prompt over 200k characters exactly (vLLM completions)', async () => {
    server = await start('vllm', { model: 'Llama-3.1-8B', modelTimeScale: 0 });
    const text = Array.from({ length: 60_000 }, (_, i) => ['inference', 'bench,', 'token.', 'latency'][i % 4]).join(' ');
    expect(text.length).toBeGreaterThan(200_000);
    const r = await call(server, 'POST', '/v1/completions', { model: 'Llama-3.1-8B', prompt: text, max_tokens: 1 });
    expect(r.status).toBe(200);
    expect((JSON.parse(r.text) as { usage: { prompt_tokens: number } }).usage.prompt_tokens).toBe(countTokens(text) + 1);
  });
});
