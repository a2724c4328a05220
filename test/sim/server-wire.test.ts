import { afterEach, describe, expect, it } from 'vitest';
import type { SimServer } from '../../src/sim/server/index.js';
import { PROMETHEUS_LINE, call, sseData, start, words } from './server-helpers.js';

const N = 7;
let server: SimServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function truthOk(s: SimServer, id: number, n: number): void {
  const rec = s.truth.get(id);
  expect(rec?.plannedMs.length).toBe(n);
  expect(rec?.writtenMs.length).toBe(n);
  for (let i = 0; i < n; i++) {
    expect(Number.isFinite(rec?.writtenMs[i])).toBe(true);
    if (i > 0) expect(rec!.writtenMs[i]!).toBeGreaterThanOrEqual(rec!.writtenMs[i - 1]!);
    expect(rec!.writtenMs[i]!).toBeGreaterThanOrEqual(rec!.plannedMs[i]! - 1e-6);
  }
}

describe('sim server wire formats', () => {
  it('vllm: completions and chat, stream and not, exactly N tokens with usage', async () => {
    server = await start('vllm');
    const s = await call(server, 'POST', '/v1/completions', { prompt: 'Hello', max_tokens: N, ignore_eos: true, stream: true, stream_options: { include_usage: true } });
    expect(s.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const ev = sseData(s.text);
    expect(ev.at(-1)).toBe('[DONE]');
    const chunks = ev.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks.at(-1).choices).toEqual([]);
    expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 2, total_tokens: 2 + N, completion_tokens: N });
    expect(Object.keys(chunks.at(-1).usage)).toEqual(['prompt_tokens', 'total_tokens', 'completion_tokens']);
    const content = chunks.slice(0, -1);
    expect(content).toHaveLength(N);
    expect(words(content.map((c) => c.choices[0].text).join(''))).toBe(N);
    expect(content.at(-1).choices[0].finish_reason).toBe('length');
    expect(content[0].usage).toBeNull();
    truthOk(server, Number(s.headers.get('x-sim-request-id')), N);

    const c = await call(server, 'POST', '/v1/chat/completions', { messages: [{ role: 'user', content: 'Hi' }], max_tokens: N, ignore_eos: true, stream: true, stream_options: {} });
    const cc = sseData(c.text).slice(0, -1).map((e) => JSON.parse(e));
    expect(cc[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(cc.at(-1).usage.completion_tokens).toBe(N); // stream_options:{} enables usage in vLLM
    expect(words(cc.slice(1, -1).map((x) => x.choices[0].delta.content).join(''))).toBe(N);

    const ns = await call(server, 'POST', '/v1/completions', { prompt: [1, 2, 3, 4], max_tokens: N, ignore_eos: true });
    const body = JSON.parse(ns.text);
    expect(body.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: N });
    expect(words(body.choices[0].text)).toBe(N);
    truthOk(server, Number(ns.headers.get('x-sim-request-id')), N);
  });

  it('vllm: metadata, errors and metrics', async () => {
    server = await start('vllm');
    expect(JSON.parse((await call(server, 'GET', '/version')).text)).toEqual({ version: '0.11.0' });
    expect(JSON.parse((await call(server, 'GET', '/v1/models')).text).data[0].owned_by).toBe('vllm');
    expect(JSON.parse((await call(server, 'POST', '/tokenize', { prompt: [5, 6, 7] })).text).count).toBe(3);
    const h = await call(server, 'GET', '/health');
    expect([h.status, h.text]).toEqual([200, '']);
    expect(JSON.parse((await call(server, 'GET', '/nope')).text)).toEqual({ detail: 'Not Found' });
    const bad = await call(server, 'POST', '/v1/completions', { model: 'other', prompt: 'x' });
    expect(bad.status).toBe(404);
    expect(JSON.parse(bad.text).error).toMatchObject({ type: 'NotFoundError', code: 404 });
    const long = await call(server, 'POST', '/v1/completions', { prompt: new Array(131_073).fill(1), max_tokens: 1 });
    expect(long.status).toBe(400);
    expect(JSON.parse(long.text).error.message).toContain('maximum context length is 131072 tokens');
    const m = await call(server, 'GET', '/metrics');
    for (const line of m.text.trim().split('\n')) if (!line.startsWith('#')) expect(line).toMatch(PROMETHEUS_LINE);
    for (const name of ['vllm:num_requests_running', 'vllm:num_requests_waiting', 'vllm:gpu_cache_usage_perc', 'vllm:kv_cache_usage_perc', 'vllm:num_preemptions_total']) expect(m.text).toContain(name);
  });

  it('vllm-legacy: NUL-framed cumulative json.dumps text, no content type', async () => {
    server = await start('vllm-legacy');
    const s = await call(server, 'POST', '/generate', { prompt: 'Hello é', max_tokens: N, ignore_eos: true, stream: true });
    expect(s.headers.get('content-type')).toBeNull();
    const frames = s.text.split('\0');
    expect(frames.at(-1)).toBe('');
    expect(frames).toHaveLength(N + 1);
    expect(frames[0]).toMatch(/^\{"text": \["Hello \\u00e9 \w+"\]\}$/);
    expect(words(JSON.parse(frames[N - 1]!).text[0]) - 2).toBe(N);
    const ns = await call(server, 'POST', '/generate', { prompt: 'Hello', max_tokens: N, ignore_eos: true });
    expect(ns.text.startsWith('{"text":["Hello ')).toBe(true);
    expect(words(JSON.parse(ns.text).text[0]) - 1).toBe(N);
    expect((await call(server, 'GET', '/health')).status).toBe(200);
    expect((await call(server, 'POST', '/generate', { max_tokens: 1 })).text).toBe('Internal Server Error');
  });

  it('tgi: data: without space, token events, final details, no [DONE]; chat usage', async () => {
    server = await start('tgi');
    const s = await call(server, 'POST', '/generate_stream', { inputs: 'Hello', parameters: { max_new_tokens: N, details: true } });
    expect(s.text.startsWith('data:{"index":1,"token":{')).toBe(true);
    const ev = sseData(s.text).map((e) => JSON.parse(e));
    const last = ev.at(-1);
    expect(last.details.generated_tokens).toBe(ev.length);
    expect(last.details.generated_tokens).toBeLessThanOrEqual(N);
    expect(last.details.input_length).toBe(2);
    const eos = last.details.finish_reason === 'eos_token';
    expect(words(last.generated_text)).toBe(ev.length - (eos ? 1 : 0));
    expect(ev.slice(0, -1).every((e) => e.generated_text === null)).toBe(true);
    const ns = await call(server, 'POST', '/generate', { inputs: 'Hello', parameters: { max_new_tokens: N, details: true } });
    const b = JSON.parse(ns.text);
    expect(b.details.tokens).toHaveLength(b.details.generated_tokens);
    expect(ns.headers.get('x-generated-tokens')).toBe(String(b.details.generated_tokens));
    expect(ns.headers.get('x-prompt-tokens')).toBe('2');
    const chat = await call(server, 'POST', '/v1/chat/completions', { messages: [{ role: 'user', content: 'Hi' }], max_tokens: N, stream: true, stream_options: { include_usage: true } });
    const cc = sseData(chat.text);
    expect(cc.at(-1)).toBe('[DONE]');
    const usage = JSON.parse(cc.at(-2)!);
    expect(Object.keys(usage)[0]).toBe('object');
    expect(usage.usage.completion_tokens).toBe(cc.length - 2);
    const info = JSON.parse((await call(server, 'GET', '/info')).text);
    expect(info).toMatchObject({ model_id: 'Llama-3.1-8B', max_total_tokens: 131072, router: 'text-generation-router' });
    // TGI 3 validates prompt + min(max_new_tokens, 1024) against max_total_tokens: a huge max_new_tokens
    // alone is accepted (generated in 1024-token segments), a prompt over the limit is not.
    const huge = await call(server, 'POST', '/generate', { inputs: 'x', parameters: { max_new_tokens: 200_000 } });
    expect(huge.status).toBe(200);
    const long = await call(server, 'POST', '/generate', { inputs: ' x'.repeat(131_072), parameters: { max_new_tokens: 16 } });
    expect(long.status).toBe(422);
    expect(JSON.parse(long.text)).toEqual({
      error: 'Input validation error: `inputs` tokens + `max_new_tokens` must be <= 131072. Given: 131073 `inputs` tokens and 16 `max_new_tokens`',
      error_type: 'validation',
    });
    expect((await call(server, 'GET', '/nope')).status).toBe(404);
    expect((await call(server, 'GET', '/metrics')).text).toContain('tgi_queue_size');
  });

  it('sglang: native cumulative text + meta_info, OpenAI with matched_stop, model info', async () => {
    server = await start('sglang');
    const s = await call(server, 'POST', '/generate', { text: 'Hello', sampling_params: { max_new_tokens: N, ignore_eos: true }, stream: true });
    const ev = sseData(s.text);
    expect(ev.at(-1)).toBe('[DONE]');
    const objs = ev.slice(0, -1).map((e) => JSON.parse(e));
    expect(objs).toHaveLength(N);
    const last = objs.at(-1);
    expect(last.meta_info).toMatchObject({ completion_tokens: N, prompt_tokens: 2, finish_reason: { type: 'length', length: N } });
    expect(words(last.text)).toBe(N);
    expect(last.output_ids).toHaveLength(N);
    expect(objs[1].text.startsWith(objs[0].text)).toBe(true);
    const ns = JSON.parse((await call(server, 'POST', '/generate', { text: 'Hello', sampling_params: { max_new_tokens: N, ignore_eos: true } })).text);
    expect(ns.meta_info.completion_tokens).toBe(N);
    const chat = await call(server, 'POST', '/v1/chat/completions', { model: 'whatever', messages: [{ role: 'user', content: 'Hi' }], max_tokens: N, ignore_eos: true, stream: true, stream_options: { include_usage: true } });
    const cc = sseData(chat.text).slice(0, -1).map((e) => JSON.parse(e));
    expect(cc[0].model).toBe('whatever');
    expect(cc.at(-2).choices[0]).toMatchObject({ finish_reason: 'length', matched_stop: null, delta: { reasoning_content: null } });
    expect(cc.at(-1).usage).toMatchObject({ completion_tokens: N, reasoning_tokens: 0 });
    expect(JSON.parse((await call(server, 'GET', '/get_model_info')).text)).toMatchObject({ model_path: 'Llama-3.1-8B', is_generation: true });
    expect(JSON.parse((await call(server, 'GET', '/get_server_info')).text).version).toMatch(/^0\.5\./);
    const long = await call(server, 'POST', '/v1/completions', { prompt: new Array(131_073).fill(1), max_tokens: 1 });
    expect(JSON.parse(long.text)).toMatchObject({ object: 'error', code: 400 });
  });

  it('lmdeploy: spaced chat chunks + usage chunk, /generate, interactive NDJSON, encode', async () => {
    server = await start('lmdeploy');
    const m = 'Llama-3.1-8B';
    const s = await call(server, 'POST', '/v1/chat/completions', { model: m, messages: [{ role: 'user', content: 'Hi' }], max_tokens: N, ignore_eos: true, stream: true, stream_options: { include_usage: true } });
    const ev = sseData(s.text);
    expect(ev[0]).toMatch(/^\{"id": "chatcmpl-[A-Za-z0-9]{22}", "object": "chat.completion.chunk", /);
    expect(ev.at(-1)).toBe('[DONE]');
    const usage = JSON.parse(ev.at(-2)!);
    expect(usage.usage.completion_tokens).toBe(N);
    expect(ev).toHaveLength(N + 2);
    const g = await call(server, 'POST', '/generate', { prompt: 'Hello', max_tokens: N, ignore_eos: true, stream: true });
    const gev = sseData(g.text).slice(0, -1).map((e) => JSON.parse(e));
    expect(gev.at(-1).meta_info).toMatchObject({ completion_tokens: N, finish_reason: { type: 'length' } });
    expect(words(gev.map((e) => e.text).join(''))).toBe(N);
    const it2 = await call(server, 'POST', '/v1/chat/interactive', { prompt: 'Hello', request_output_len: N, ignore_eos: true, stream: true });
    const lines = it2.text.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(N);
    expect(lines.at(-1)).toMatchObject({ tokens: N, finish_reason: 'length' });
    const ns = JSON.parse((await call(server, 'POST', '/v1/completions', { model: m, prompt: 'Hello', max_tokens: N, ignore_eos: true })).text);
    expect(ns.usage.completion_tokens).toBe(N);
    expect(JSON.parse((await call(server, 'POST', '/v1/encode', { input: 'Hello world' })).text).length).toBe(3);
    expect(JSON.parse((await call(server, 'GET', '/v1/models')).text).data[0].owned_by).toBe('lmdeploy');
    const bad = await call(server, 'POST', '/v1/completions', { model: 'foo', prompt: 'x' });
    expect([bad.status, JSON.parse(bad.text).message]).toEqual([404, "The model 'foo' does not exist."]);
  });

  it('llamacpp: /completion partials + final stop event, chat usage, props and Server header', async () => {
    server = await start('llamacpp');
    const s = await call(server, 'POST', '/completion', { prompt: 'Hello', n_predict: N, ignore_eos: true, stream: true });
    expect(s.headers.get('server')).toBe('llama.cpp');
    const ev = sseData(s.text).map((e) => JSON.parse(e));
    expect(ev).toHaveLength(N + 1);
    const last = ev.at(-1);
    expect(last).toMatchObject({ stop: true, tokens_predicted: N, tokens_evaluated: 2, stop_type: 'limit', content: '' });
    expect(last.timings.predicted_n).toBe(N);
    expect(words(ev.slice(0, -1).map((e) => e.content).join(''))).toBe(N);
    const ns = JSON.parse((await call(server, 'POST', '/completion', { prompt: 'Hello', n_predict: N, ignore_eos: true })).text);
    expect([ns.tokens_predicted, words(ns.content)]).toEqual([N, N]);
    const chat = await call(server, 'POST', '/v1/chat/completions', { messages: [{ role: 'user', content: 'Hi' }], max_tokens: N, ignore_eos: true, stream: true, stream_options: { include_usage: true } });
    const cc = sseData(chat.text).slice(0, -1).map((e) => JSON.parse(e));
    expect(Object.keys(cc[0])).toEqual(['choices', 'created', 'id', 'model', 'system_fingerprint', 'object']);
    expect(cc[0].choices[0].delta).toEqual({ role: 'assistant', content: null });
    expect(cc.at(-1).usage.completion_tokens).toBe(N);
    expect(cc.at(-2).choices[0]).toMatchObject({ finish_reason: 'length', delta: {} });
    const props = JSON.parse((await call(server, 'GET', '/props')).text);
    expect(props.default_generation_settings.n_ctx).toBe(131072);
    expect(JSON.parse((await call(server, 'GET', '/health')).text)).toEqual({ status: 'ok' });
    expect(JSON.parse((await call(server, 'POST', '/tokenize', { content: 'Hello world' })).text).tokens).toHaveLength(2);
    expect((await call(server, 'GET', '/nope')).status).toBe(404);
  });

  it('triton: alphabetical keys, text_output per token, no terminator; metadata', async () => {
    server = await start('triton');
    const s = await call(server, 'POST', '/v2/models/ensemble/generate_stream', { text_input: 'Hello', max_tokens: N, min_length: N, stream: true, bad_words: '', stop_words: '' });
    const ev = sseData(s.text);
    expect(ev).toHaveLength(N);
    for (const e of ev) {
      const keys = Object.keys(JSON.parse(e));
      expect(keys).toEqual([...keys].sort());
    }
    expect(ev[0]).toContain('"context_logits":0.0');
    expect(words(ev.map((e) => JSON.parse(e).text_output).join(''))).toBe(N);
    const ns = JSON.parse((await call(server, 'POST', '/v2/models/ensemble/generate', { text_input: 'Hello', max_tokens: N, end_id: -1 })).text);
    expect(words(ns.text_output)).toBe(N + 1); // prompt echoed
    expect(JSON.parse((await call(server, 'GET', '/v2')).text).name).toBe('triton');
    expect(JSON.parse((await call(server, 'GET', '/v2/models/ensemble')).text).outputs[0].name).toBe('text_output');
    expect((await call(server, 'POST', '/v2/models/foo/generate', { text_input: 'x', max_tokens: 1 })).status).toBe(400);
    expect((await call(server, 'GET', '/metrics')).text).toContain('nv_trt_llm_kv_cache_block_metrics');
  });

  it('ollama: NDJSON with eval_count and ns durations, metadata', async () => {
    server = await start('ollama');
    const s = await call(server, 'POST', '/api/generate', { model: 'Llama-3.1-8B', prompt: 'Hello', raw: true, options: { num_predict: N } });
    expect(s.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = s.text.trim().split('\n').map((l) => JSON.parse(l));
    const last = lines.at(-1);
    expect(last.done).toBe(true);
    expect(last.eval_count).toBeLessThanOrEqual(N);
    expect(lines.length - 1).toBe(last.eval_count - (last.done_reason === 'stop' ? 1 : 0));
    expect(Number.isInteger(last.total_duration) && last.total_duration > 0).toBe(true);
    expect(last.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    const chat = JSON.parse((await call(server, 'POST', '/api/chat', { model: 'Llama-3.1-8B:latest', messages: [{ role: 'user', content: 'Hi' }], stream: false, options: { num_predict: N } })).text);
    expect(chat.done).toBe(true);
    expect(chat.message.role).toBe('assistant');
    expect((await call(server, 'GET', '/')).text).toBe('Ollama is running');
    expect(JSON.parse((await call(server, 'GET', '/api/version')).text).version).toBe('0.32.15');
    expect(JSON.parse((await call(server, 'GET', '/api/tags')).text).models[0].name).toBe('Llama-3.1-8B:latest');
    const nf = await call(server, 'POST', '/api/generate', { model: 'foo', prompt: 'x' });
    expect([nf.status, nf.text]).toEqual([404, '{"error":"model \\"foo\\" not found, try pulling it first"}']);
  });
});
