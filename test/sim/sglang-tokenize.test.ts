/**
 * Issue 51, item 4: SGLang's `/v1/tokenize` takes a string or a list of strings (TokenizeRequest.prompt:
 * Union[str, List[str]]; a list answers lists of ids and counts), and the client counts a whole batch in one request.
 * The simulated SGLang refused the list (400 "serves one prompt per request"), so every SGLang run on the built-in
 * simulator fell back to the approximate tokenizer. Both now speak SGLang's real API and every prompt is exact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimServer } from '../../src/sim/server/index.js';
import { createWorkload } from '../../src/workload/create.js';
import { createServerTokenizer } from '../../src/workload/server-tokenizer.js';
import { call, start } from './server-helpers.js';

let server: SimServer;
beforeAll(async () => {
  server = await start('sglang');
});
afterAll(() => server.close());

const tokenize = async (body: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
  const r = await call(server, 'POST', '/v1/tokenize', body);
  return { status: r.status, body: JSON.parse(r.text) as Record<string, unknown> };
};

describe("the simulated SGLang's /v1/tokenize", () => {
  it('answers a string with ids and a count, a list of strings with a list of each (one string included)', async () => {
    const one = await tokenize({ prompt: 'Hello world' });
    expect(one.status).toBe(200);
    // BOS + 2 words, add_special_tokens defaulting to true
    expect(one.body).toMatchObject({ count: 3, max_model_len: server.engine.maxModelLen });
    expect(one.body['tokens']).toHaveLength(3);

    const batch = await tokenize({ model: 'x', prompt: ['Hello world', 'a b c d', 'Hi'], add_special_tokens: true });
    expect(batch.status).toBe(200);
    expect(batch.body['count']).toEqual([3, 5, 2]);
    expect((batch.body['tokens'] as number[][]).map((ids) => ids.length)).toEqual([3, 5, 2]);

    expect((await tokenize({ prompt: ['Hello world'] })).body['count']).toEqual([3]);
    const noBos = await tokenize({ prompt: ['Hello world'], add_special_tokens: false });
    expect(noBos.body['count']).toEqual([2]);
    expect((noBos.body['tokens'] as number[][])[0]).toHaveLength(2);
    // The alias SGLang registers beside it.
    expect(JSON.parse((await call(server, 'POST', '/tokenize', { prompt: ['a', 'b c'] })).text).count).toEqual([2, 3]);
  });

  it('refuses a prompt that is neither, with its flat OpenAI error', async () => {
    const bad = await tokenize({ prompt: [1, 2, 3] });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ object: 'error', type: 'BadRequestError', code: 400 });
  });

  it("the client's server tokenizer counts batches there, and every synthetic prompt is exactly its length", async () => {
    const tokenizer = await createServerTokenizer(server.url, 'sglang', undefined, { model: 'Llama-3.1-8B' });
    expect(tokenizer.specialTokens).toBe(1);
    const w = await createWorkload({ kind: 'synthetic', prompt: { kind: 'fixed', value: 512 }, output: { kind: 'fixed', value: 4 } }, { tokenizer, seed: 5 });
    const items = Array.from({ length: 10 }, (_, i) => w.item(i));
    const before = tokenizer.requests;
    expect(await tokenizer.count(items.map((it) => it.prompt))).toEqual(items.map(() => 512));
    // One request for the whole batch.
    expect(tokenizer.requests - before).toBe(1);
    // What the engine itself counts for each prompt sent (usage.prompt_tokens) is the length the client built.
    for (const it of items.slice(0, 3)) {
      const r = await call(server, 'POST', '/v1/completions', { model: 'Llama-3.1-8B', prompt: it.prompt, max_tokens: 1 });
      expect(JSON.parse(r.text).usage.prompt_tokens).toBe(512);
    }
  });
});
