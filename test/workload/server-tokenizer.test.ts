import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/dialects/types.js';
import { createWorkload } from '../../src/workload/create.js';
import { loadHfTokenizer } from '../../src/workload/hf-tokenizer.js';
import { createServerTokenizer, type TokenizeApi } from '../../src/workload/server-tokenizer.js';
import { countPromptTokens, type Tokenizer } from '../../src/workload/tokenizer.js';
import { writeTinyBpe } from './tiny-bpe.js';

let tok: Tokenizer;
let server: Server;
let base = '';
const hits: string[] = [];

/** A loopback server answering each engine's tokenize endpoints, counting with the same tokenizer.json. */
function answer(path: string, body: Record<string, unknown>): unknown {
  const ids = (text: string) => Array.from({ length: countPromptTokens(tok, text) }, (_, i) => i);
  const chat = (m: unknown) => tok.countChatTokens?.(m as ChatMessage[]) ?? 0;
  if (path === '/tokenize' && 'model' in body) {
    const count = body['messages'] ? chat(body['messages']) : countPromptTokens(tok, body['prompt'] as string);
    return { count, max_model_len: 4096, tokens: [], token_strs: null };
  }
  if (path === '/tokenize' && 'inputs' in body) return ids(body['inputs'] as string).map((id) => ({ id, text: '', start: 0, stop: 0 }));
  if (path === '/tokenize' && 'content' in body) return { tokens: ids(body['content'] as string) };
  if (path === '/v1/tokenize') {
    const p = body['prompt'] as string | string[];
    return Array.isArray(p) ? { count: p.map((x) => countPromptTokens(tok, x)), tokens: [] } : { count: countPromptTokens(tok, p) };
  }
  if (path === '/chat_tokenize') return { tokenize_response: Array.from({ length: chat(body['messages']) }), templated_text: '' };
  return undefined;
}

beforeAll(async () => {
  tok = await loadHfTokenizer(writeTinyBpe(1500));
  server = createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', () => {
      hits.push(req.url ?? '');
      const reply = answer(req.url ?? '', JSON.parse(data || '{}') as Record<string, unknown>);
      res.writeHead(reply === undefined ? 404 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply ?? { error: 'not found' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('server tokenizer', () => {
  for (const api of ['vllm', 'sglang', 'tgi', 'llamacpp'] as TokenizeApi[]) {
    it(`${api}: prompts of 128/512/2048 tokens are exact per the server's count, with few requests`, async () => {
      const server = await createServerTokenizer(`${base}/v1`, api, 'k', { model: 'm' });
      expect(server.exact).toBe(true);
      expect(server.specialTokens).toBe(1);
      for (const target of [128, 512, 2048]) {
        const before = server.requests;
        const w = await createWorkload({ kind: 'synthetic', prompt: { kind: 'fixed', value: target }, output: { kind: 'fixed', value: 8 } }, { tokenizer: server, seed: 4 });
        const setup = server.requests - before;
        // calibration (2 counts + bisection) and 3 validation prompts; SGLang batches each step into one request
        expect(setup).toBeLessThanOrEqual(api === 'sglang' ? 4 : 12);
        const items = Array.from({ length: 40 }, (_, i) => w.item(i));
        const counted = await server.count(items.map((it) => it.prompt));
        expect(counted.filter((c) => c !== target)).toEqual([]);
        expect(items.every((it) => it.promptTokens === target)).toBe(true);
      }
    });
  }

  it('vllm: chat prompts count the template through /tokenize messages', async () => {
    const server = await createServerTokenizer(base, 'vllm', undefined, { model: 'm' });
    const w = await createWorkload({ kind: 'synthetic', prompt: { kind: 'fixed', value: 512 }, output: { kind: 'fixed', value: 8 }, chat: true, prefix: { tokens: 100, groups: 2 } }, { tokenizer: server, seed: 1 });
    const items = Array.from({ length: 10 }, (_, i) => w.item(i));
    expect(items.map((it) => tok.countChatTokens?.(it.messages ?? []))).toEqual(items.map(() => 512));
  });

  it('a server without the endpoint is one config error naming the URL', async () => {
    await expect(createServerTokenizer(`${base}/nothing`, 'vllm')).rejects.toThrow(/POST .*\/nothing\/tokenize → HTTP 404/);
  });
});
