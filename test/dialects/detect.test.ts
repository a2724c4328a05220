import { type IncomingMessage, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { detectEngine, listModels } from '../../src/dialects/index.js';

type Route = { status?: number; body?: string | object; headers?: Record<string, string> } | 'hang';
type Routes = Record<string, Route | ((req: IncomingMessage) => Route)>;

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r)))));
});

const NOT_FOUND: Route = { status: 404, body: { detail: 'Not Found' } };

/** A loopback server answering GETs from `routes`; anything else is FastAPI's 404. */
async function serve(routes: Routes, all: Record<string, string> = {}, fallback: Route = NOT_FOUND): Promise<string> {
  const server = createServer((req, res) => {
    const entry = routes[req.url ?? ''];
    const route = (typeof entry === 'function' ? entry(req) : entry) ?? fallback;
    if (route === 'hang') return;
    const body = typeof route.body === 'string' ? route.body : route.body === undefined ? '' : JSON.stringify(route.body);
    const type = typeof route.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json';
    res.writeHead(route.status ?? 200, { 'content-type': type, ...all, ...route.headers });
    res.end(body);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const models = (owned_by: string, extra: object = {}) => ({
  object: 'list',
  data: [{ id: 'meta-llama/Llama-3.1-8B-Instruct', object: 'model', created: 1, owned_by, ...extra }],
});

describe('detectEngine', () => {
  it('Ollama: GET / text, /api/version, /api/tags, /api/ps', async () => {
    const url = await serve({
      '/': { body: 'Ollama is running' },
      '/api/version': { body: { version: '0.32.15' } },
      '/api/tags': { body: { models: [{ name: 'llama3.2:latest', model: 'llama3.2:latest', size: 1 }] } },
      '/api/ps': { body: { models: [{ name: 'llama3.2:latest', context_length: 4096 }] } },
    });
    expect(await detectEngine(url)).toEqual({
      engine: 'ollama',
      api: 'ollama',
      version: '0.32.15',
      model: 'llama3.2:latest',
      models: ['llama3.2:latest'],
      maxContext: 4096,
      evidence: 'GET / answered "Ollama is running"',
    });
  });

  it('Triton: GET /v2 name triton, ensemble takes text_input', async () => {
    const url = await serve(
      {
        '/v2': { body: { name: 'triton', version: '2.71.0', extensions: ['classification'] } },
        '/v2/models/ensemble': {
          body: { name: 'ensemble', versions: ['1'], platform: 'ensemble', inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [-1, 1] }] },
        },
      },
      {},
      { status: 400, body: { error: 'Not Found' } },
    );
    expect(await detectEngine(url)).toMatchObject({ engine: 'triton', api: 'triton', version: '2.71.0', model: 'ensemble', models: ['ensemble'] });
  });

  it('TGI v3: GET /info (GET / is the health check)', async () => {
    const url = await serve({
      '/': { body: '' },
      '/info': {
        body: { model_id: 'meta-llama/Llama-3.1-8B-Instruct', max_input_tokens: 8191, max_total_tokens: 8192, router: 'text-generation-router', version: '3.3.6-dev0' },
      },
    });
    expect(await detectEngine(url)).toEqual({
      engine: 'tgi',
      api: 'tgi',
      version: '3.3.6-dev0',
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      models: ['meta-llama/Llama-3.1-8B-Instruct'],
      maxContext: 8192,
      evidence: 'GET /info has model_id + max_total_tokens (text-generation-router)',
    });
  });

  it('SGLang: /get_model_info, /get_server_info version + context_length, /v1/models', async () => {
    const url = await serve({
      '/get_model_info': { body: { model_path: 'meta-llama/Llama-3.1-8B-Instruct', tokenizer_path: 'x', is_generation: true } },
      '/get_server_info': { body: { model_path: 'x', context_length: 32768, version: '0.5.4' } },
      '/v1/models': { body: models('sglang', { max_model_len: 131072 }) },
    });
    expect(await detectEngine(url)).toMatchObject({
      engine: 'sglang',
      api: 'openai-completions',
      version: '0.5.4',
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      maxContext: 32768,
    });
  });

  it('llama.cpp: the Server header on any reply, /props for build and n_ctx', async () => {
    const url = await serve(
      {
        '/': { body: '<!doctype html><html></html>', headers: { 'content-type': 'text/html' } },
        '/props': { body: { default_generation_settings: { n_ctx: 8192 }, total_slots: 4, model_path: '/models/Llama-3.1-8B-Q4_K_M.gguf', build_info: 'b6100-1a2b3c4d' } },
        '/v1/models': { body: { object: 'list', data: [{ id: 'Llama-3.1-8B-Q4_K_M', object: 'model', owned_by: 'llamacpp', meta: { n_ctx_train: 131072 } }] } },
      },
      { server: 'llama.cpp' },
    );
    expect(await detectEngine(url)).toEqual({
      engine: 'llamacpp',
      api: 'openai-completions',
      version: 'b6100-1a2b3c4d',
      model: 'Llama-3.1-8B-Q4_K_M',
      models: ['Llama-3.1-8B-Q4_K_M'],
      maxContext: 8192,
      evidence: 'response header Server: llama.cpp',
    });
  });

  it('llama.cpp behind a proxy that drops the Server header: /props', async () => {
    const url = await serve({ '/props': { body: { default_generation_settings: { n_ctx: 4096 }, model_path: '/m/tiny.gguf' } } });
    expect(await detectEngine(url)).toMatchObject({ engine: 'llamacpp', models: ['tiny'], maxContext: 4096 });
  });

  it('vLLM: /version with only "version", /v1/models owned_by vllm; base URL given with /v1', async () => {
    const url = await serve({
      '/version': { body: { version: '0.11.0' } },
      '/v1/models': { body: models('vllm', { max_model_len: 131072 }) },
    });
    expect(await detectEngine(`${url}/v1/`)).toEqual({
      engine: 'vllm',
      api: 'openai-completions',
      version: '0.11.0',
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      models: ['meta-llama/Llama-3.1-8B-Instruct'],
      maxContext: 131072,
      evidence: 'GET /version has only "version", /v1/models owned_by vllm',
    });
  });

  it('vLLM with --api-key: /v1/models needs the bearer token, /version stays open', async () => {
    const guarded = (req: IncomingMessage): Route =>
      req.headers.authorization === 'Bearer sk-1' ? { body: models('vllm') } : { status: 401, body: { error: 'Unauthorized' } };
    const url = await serve({ '/version': { body: { version: '0.10.1' } }, '/v1/models': guarded });
    expect(await detectEngine(url)).toMatchObject({ engine: 'vllm', version: '0.10.1', models: [] });
    expect(await detectEngine(url, { apiKey: 'sk-1' })).toMatchObject({ engine: 'vllm', models: ['meta-llama/Llama-3.1-8B-Instruct'] });
  });

  it('lmdeploy, OpenAI and unknown OpenAI-compatible servers by /v1/models', async () => {
    const lm = await serve({ '/v1/models': { body: models('lmdeploy') } });
    expect(await detectEngine(lm)).toMatchObject({ engine: 'lmdeploy', api: 'openai-chat', evidence: 'GET /v1/models answered (owned_by "lmdeploy")' });
    const oai = await serve({ '/v1/models': { body: models('system'), headers: { 'openai-version': '2020-10-01' } } });
    expect(await detectEngine(oai)).toMatchObject({ engine: 'openai', api: 'openai-chat' });
    const other = await serve({ '/v1/models': { body: models('acme') } });
    expect(await detectEngine(other)).toMatchObject({ engine: 'openai-compatible', api: 'openai-chat', models: ['meta-llama/Llama-3.1-8B-Instruct'] });
  });

  it('vLLM legacy api_server: /health 200 and FastAPI 404 for /v1/models', async () => {
    const url = await serve({ '/health': { body: '' } });
    expect(await detectEngine(url)).toMatchObject({ engine: 'vllm-legacy', api: 'vllm', models: [] });
  });

  it('a probe that hangs is a miss, not a failure', async () => {
    const url = await serve({ '/v2': 'hang', '/info': 'hang', '/v1/models': { body: models('lmdeploy') } });
    expect(await detectEngine(url, { timeoutMs: 200 })).toMatchObject({ engine: 'lmdeploy' });
  });

  it('unidentifiable or key-guarded servers are config errors with a way out', async () => {
    const none = await serve({});
    await expect(detectEngine(none)).rejects.toMatchObject({ code: 'E_CONFIG', message: `could not identify the inference server at ${none}` });
    const locked = await serve({ '/v1/models': { status: 401, body: { error: 'Unauthorized' } } });
    await expect(detectEngine(locked)).rejects.toMatchObject({ code: 'E_CONFIG', hint: expect.stringContaining('--api-key') });
  });

  it('connection refused: E_CONNECT naming the URL and what to do', async () => {
    const url = await serve({});
    await new Promise((r) => servers.pop()?.close(r));
    const err = await detectEngine(url).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'InferbenchError', code: 'E_CONNECT' });
    expect((err as Error).message).toBe(`cannot connect to ${url} (connection refused): start the server or fix the URL (--target)`);
  });

  it('no answer at all: E_CONNECT_TIMEOUT', async () => {
    const url = await serve({ '/': 'hang' });
    await expect(detectEngine(url, { timeoutMs: 150 })).rejects.toMatchObject({ code: 'E_CONNECT_TIMEOUT' });
  });

  it('an invalid URL is a config error', async () => {
    await expect(detectEngine('localhost:8000')).rejects.toMatchObject({ code: 'E_CONFIG' });
  });
});

describe('listModels', () => {
  it('ids from /v1/models, with the bearer key', async () => {
    const url = await serve({
      '/v1/models': (req) => (req.headers.authorization === 'Bearer k' ? { body: models('vllm') } : { status: 401, body: { error: 'Unauthorized' } }),
    });
    expect(await listModels(url, 'k')).toEqual(['meta-llama/Llama-3.1-8B-Instruct']);
    await expect(listModels(url)).rejects.toMatchObject({ code: 'E_HTTP_STATUS', message: `GET ${url}/v1/models answered 401: Unauthorized` });
  });
});
