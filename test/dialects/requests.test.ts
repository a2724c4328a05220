import { describe, expect, it } from 'vitest';
import { apiNames, dialects, getDialect } from '../../src/dialects/index.js';
import type { ApiName, HttpRequestPlan } from '../../src/dialects/types.js';
import { request } from './_run.js';

const body = (plan: HttpRequestPlan): Record<string, unknown> => JSON.parse(plan.body) as Record<string, unknown>;
const plan = (api: ApiName, over: Parameters<typeof request>[0] = {}): HttpRequestPlan =>
  dialects[api].buildRequest(request({ prompt: 'Hi', maxTokens: 128, ...over }));

describe('request building', () => {
  it('openai-chat: messages from prompt, usage requested, forced length via ignore_eos + min_tokens', () => {
    const p = plan('openai-chat', { forceLength: true });
    expect(p).toMatchObject({ method: 'POST', path: '/v1/chat/completions', framing: 'sse' });
    expect(p.headers).toEqual({ 'content-type': 'application/json', accept: 'text/event-stream' });
    expect(body(p)).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 128,
      stream: true,
      stream_options: { include_usage: true },
      ignore_eos: true,
      min_tokens: 128,
    });
  });

  it('openai-chat: unforced, non-streaming, explicit messages, extraBody last (null removes)', () => {
    const messages = [
      { role: 'system' as const, content: 's' },
      { role: 'user' as const, content: 'u' },
    ];
    const p = plan('openai-chat', { stream: false, messages, extraBody: { temperature: 0, max_tokens: 7, model: null } });
    expect(p).toMatchObject({ path: '/v1/chat/completions', framing: 'json' });
    expect(p.headers['accept']).toBe('application/json');
    expect(body(p)).toEqual({ messages, max_tokens: 7, stream: false, temperature: 0 });
  });

  it('openai-completions: prompt as-is; empty model left out', () => {
    expect(body(plan('openai-completions', { model: '' }))).toEqual({
      prompt: 'Hi',
      max_tokens: 128,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(plan('openai-completions').path).toBe('/v1/completions');
    expect(body(plan('openai-completions', { forceLength: true }))).toMatchObject({ ignore_eos: true, min_tokens: 128 });
  });

  it('vllm legacy: /generate, nul-or-ndjson, ignore_eos only (0.2.x rejects min_tokens)', () => {
    const p = plan('vllm', { forceLength: true });
    expect(p).toMatchObject({ path: '/generate', framing: 'nul-or-ndjson' });
    expect(body(p)).toEqual({ prompt: 'Hi', max_tokens: 128, stream: true, ignore_eos: true });
    expect(body(plan('vllm'))).toEqual({ prompt: 'Hi', max_tokens: 128, stream: true });
    expect(plan('vllm', { stream: false }).framing).toBe('json');
  });

  it('tgi: /generate_stream with details, nothing to force; /generate when not streaming', () => {
    const p = plan('tgi', { forceLength: true });
    expect(p).toMatchObject({ path: '/generate_stream', framing: 'sse' });
    expect(body(p)).toEqual({ inputs: 'Hi', parameters: { max_new_tokens: 128, details: true } });
    expect(dialects.tgi.canForceLength).toBe(false);
    const q = plan('tgi', { stream: false, extraBody: { parameters: { do_sample: false } } });
    expect(q).toMatchObject({ path: '/generate', framing: 'json' });
    expect(body(q)).toEqual({ inputs: 'Hi', parameters: { max_new_tokens: 128, details: true, do_sample: false } });
  });

  it('sglang: sampling_params.ignore_eos + min_new_tokens when forced', () => {
    expect(body(plan('sglang', { forceLength: true }))).toEqual({
      text: 'Hi',
      sampling_params: { max_new_tokens: 128, ignore_eos: true, min_new_tokens: 128 },
      stream: true,
    });
    expect(body(plan('sglang'))).toEqual({ text: 'Hi', sampling_params: { max_new_tokens: 128 }, stream: true });
    expect(plan('sglang').path).toBe('/generate');
  });

  it('lmdeploy: /generate with max_tokens, ignore_eos when forced', () => {
    expect(plan('lmdeploy', { forceLength: true })).toMatchObject({ path: '/generate', framing: 'sse' });
    expect(body(plan('lmdeploy', { forceLength: true }))).toEqual({ prompt: 'Hi', max_tokens: 128, stream: true, ignore_eos: true });
    expect(body(plan('lmdeploy'))).toEqual({ prompt: 'Hi', max_tokens: 128, stream: true });
  });

  it('llamacpp: /completion with n_predict, ignore_eos when forced', () => {
    expect(plan('llamacpp')).toMatchObject({ path: '/completion', framing: 'sse' });
    expect(body(plan('llamacpp', { forceLength: true }))).toEqual({ prompt: 'Hi', n_predict: 128, stream: true, ignore_eos: true });
    expect(body(plan('llamacpp'))).toEqual({ prompt: 'Hi', n_predict: 128, stream: true });
  });

  it('triton: model path, text_input/max_tokens, min_length when forced', () => {
    const p = plan('triton', { model: 'ensemble', forceLength: true });
    expect(p).toMatchObject({ path: '/v2/models/ensemble/generate_stream', framing: 'sse' });
    expect(body(p)).toEqual({ text_input: 'Hi', max_tokens: 128, bad_words: '', stop_words: '', stream: true, min_length: 128 });
    expect(body(plan('triton'))).not.toHaveProperty('min_length');
    expect(plan('triton', { model: '', stream: false }).path).toBe('/v2/models/ensemble/generate');
    expect(plan('triton', { model: 'a b' }).path).toBe('/v2/models/a%20b/generate_stream');
    expect(body(plan('triton', { forceLength: true, extraBody: { min_tokens: 128, min_length: null } }))).toMatchObject({
      min_tokens: 128,
    });
  });

  it('ollama: /api/generate NDJSON, raw prompt, options.num_predict, cannot force', () => {
    const p = plan('ollama', { forceLength: true, model: 'llama3.2' });
    expect(p).toMatchObject({ path: '/api/generate', framing: 'ndjson' });
    expect(body(p)).toEqual({ model: 'llama3.2', prompt: 'Hi', raw: true, stream: true, options: { num_predict: 128 } });
    expect(dialects.ollama.canForceLength).toBe(false);
    expect(body(plan('ollama', { extraBody: { options: { temperature: 0 } } }))['options']).toEqual({
      num_predict: 128,
      temperature: 0,
    });
  });

  it('every dialect: POST, JSON content type, valid JSON body, framing json when not streaming', () => {
    for (const api of apiNames) {
      const s = plan(api);
      const w = plan(api, { stream: false });
      expect(s.method).toBe('POST');
      expect(s.headers['content-type']).toBe('application/json');
      expect(w.framing).toBe('json');
      // TGI has no stream flag: the route decides. Embeddings APIs never stream and send no flag.
      if (api !== 'tgi' && !dialects[api].embeddings) expect(body(w)['stream']).toBe(false);
    }
  });
});

describe('registry', () => {
  it('maps every name to its dialect', () => {
    for (const api of apiNames) expect(getDialect(api).name).toBe(api);
    expect(apiNames).toHaveLength(11);
  });

  it('unknown names are a config error that lists the valid ones', () => {
    expect(() => getDialect('openai')).toThrowError(/unknown API "openai"/);
    try {
      getDialect('nope');
    } catch (err) {
      expect(err).toMatchObject({ code: 'E_CONFIG', hint: expect.stringContaining('openai-chat, openai-completions, vllm') });
    }
  });
});

describe('errorMessage', () => {
  const cases: [ApiName, number, string, string][] = [
    ['openai-chat', 404, '{"error":{"message":"The model `foo` does not exist.","type":"NotFoundError","param":"model","code":404}}', 'The model `foo` does not exist.'],
    ['openai-chat', 400, '{"object":"error","message":"too long","type":"BadRequestError","param":null,"code":400}', 'too long'],
    ['openai-chat', 401, '{"error":"Unauthorized"}', 'Unauthorized'],
    ['lmdeploy', 404, '{"message":"The model \'foo\' does not exist.","type":"not_found_error","code":404,"param":null,"object":"error"}', "The model 'foo' does not exist."],
    ['tgi', 422, '{"error":"Input validation error: `temperature` must be strictly positive","error_type":"validation"}', 'Input validation error: `temperature` must be strictly positive'],
    ['ollama', 404, '{"error":"model \\"foo\\" not found, try pulling it first"}', 'model "foo" not found, try pulling it first'],
    ['triton', 400, '{"error":"Request for unknown model: \'foo\' is not found"}', "Request for unknown model: 'foo' is not found"],
    ['llamacpp', 503, '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}', 'Loading model'],
    ['sglang', 400, '{"error":{"message":"bad"}}', 'bad'],
    ['vllm', 500, 'Internal Server Error', 'Internal Server Error'],
    ['lmdeploy', 422, '{"detail":[{"type":"missing","loc":["body","prompt"],"msg":"Field required"}]}', 'body.prompt: Field required'],
    ['vllm', 404, '{"detail":"Not Found"}', 'Not Found'],
    ['tgi', 422, 'Failed to deserialize the JSON body\n  into the target type:   missing field `inputs`\n', 'Failed to deserialize the JSON body into the target type: missing field `inputs`'],
    ['triton', 502, '   ', 'HTTP 502 with an empty body'],
  ];
  for (const [api, status, raw, expected] of cases) {
    it(`${api} ${status}: ${expected}`, () => expect(dialects[api].errorMessage(status, raw)).toBe(expected));
  }

  it('keeps one line of bounded length', () => {
    const msg = dialects['openai-chat'].errorMessage(500, `<html>\n${'x'.repeat(5000)}\n</html>`);
    expect(msg).not.toContain('\n');
    expect(msg.length).toBeLessThanOrEqual(300);
  });
});
