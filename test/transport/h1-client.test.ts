import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { getDialect } from '../../src/dialects/index.js';
import type { GenerationRequest } from '../../src/dialects/types.js';
import type { Exchange } from '../../src/transport/exchange.js';
import { HttpTarget, type HttpTargetOptions } from '../../src/transport/http.js';
import { readBody } from '../helpers/http-util.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function serve(handler: Handler, setup?: (s: Server) => void): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const server = createServer((req, res) => void readBody(req).then((body) => handler(req, res, body)));
  server.on('connection', () => connections++);
  setup?.(server);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections };
}

const chat = getDialect('openai-chat');
const req = (over: Partial<GenerationRequest> = {}): GenerationRequest => ({ model: 'm', prompt: 'hi', maxTokens: 8, forceLength: true, stream: true, ...over });
const chunk = (text: string, finish: string | null = null): string =>
  `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: text }, finish_reason: finish }] })}\n\n`;
const usage = 'data: {"id":"x","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":8,"total_tokens":12}}\n\ndata: [DONE]\n\n';

/** A stream written in odd pieces (mid-frame, mid-character), one piece per tick so they go out apart. */
const streaming: Handler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'rid-7' });
  const body = [' a', ' b', ' é', ' 日本', ' "q"', ' line\n', ' c'].map((t) => chunk(t)).join('') + chunk(' d', 'length') + usage;
  const bytes = Buffer.from(body);
  const cuts = [0, 3, 40, 41, 90, 91, 92, 150, 200, 260, 300, 301, 420, bytes.length];
  let i = 0;
  const next = (): void => {
    if (i + 1 >= cuts.length) return void res.end();
    res.write(bytes.subarray(cuts[i], cuts[i + 1]));
    i++;
    setTimeout(next, 1);
  };
  next();
};

async function send(opts: HttpTargetOptions, r = req(), act?: (t: HttpTarget) => void): Promise<Exchange> {
  const target = new HttpTarget(opts);
  try {
    const p = target.send(chat.buildRequest(r), chat, r);
    act?.(target);
    return await p;
  } finally {
    await target.close();
  }
}

const essence = (ex: Exchange): unknown => ({
  text: ex.textParts.join(''), frames: ex.contentTimesMs.length, usage: ex.usage, finishReason: ex.finishReason, done: ex.done,
  status: ex.httpStatus, rid: ex.serverRequestId, error: ex.error,
});

describe('h1 client (plain http): what undici observes, for less CPU', () => {
  it('a stream cut mid-frame and mid-character: the same exchange as undici, stamped in order', async () => {
    const { url } = await serve(streaming);
    const h1 = await send({ baseUrl: url, connections: 1, client: 'h1' });
    const undici = await send({ baseUrl: url, connections: 1, client: 'undici' });
    expect(essence(h1)).toEqual(essence(undici));
    expect(h1.textParts.join('')).toBe(' a b é 日本 "q" line\n c d');
    expect(h1.error).toBeUndefined();
    const t = [h1.dispatchedAtMs as number, h1.sentAtMs, h1.headersAtMs as number, ...h1.contentTimesMs, h1.endAtMs];
    expect([...t].sort((x, y) => x - y)).toEqual(t);
  });

  it('an error status: the same one-line message, Retry-After included', async () => {
    const { url } = await serve((_q, res) => {
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '7' });
      res.end('{"error":{"message":"overloaded","type":"server_error"}}');
    });
    const h1 = await send({ baseUrl: url, connections: 1, client: 'h1' });
    expect(h1.error).toEqual({ code: 'E_HTTP_STATUS', message: 'HTTP 503: overloaded (Retry-After: 7)', httpStatus: 503 });
    expect(essence(h1)).toEqual(essence(await send({ baseUrl: url, connections: 1, client: 'undici' })));
  });

  it('a non-streamed JSON reply with Content-Length', async () => {
    const { url } = await serve((_q, res) => {
      const body = JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'whole' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1 } });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    const h1 = await send({ baseUrl: url, connections: 1, client: 'h1' }, req({ stream: false }));
    expect(essence(h1)).toMatchObject({ text: 'whole', done: true, finishReason: 'stop' });
  });

  it('silence after the first token: E_TIMEOUT_IDLE; no headers: E_TIMEOUT_FIRST_BYTE; too long: E_TIMEOUT_TOTAL', async () => {
    const { url } = await serve((q, res) => {
      if (q.headers['x-case'] === 'no-head') return;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk(' a'));
      if (q.headers['x-case'] === 'slow') {
        const t = setInterval(() => (res.destroyed ? clearInterval(t) : res.write(chunk(' x'))), 20);
      }
    });
    const r = req();
    const plan = (c: string) => ({ ...chat.buildRequest(r), headers: { ...chat.buildRequest(r).headers, 'x-case': c } });
    const target = new HttpTarget({ baseUrl: url, connections: 3, client: 'h1', timeouts: { idleMs: 150, firstByteMs: 150, totalMs: 400 } });
    const [idle, head, total] = await Promise.all([target.send(plan('idle'), chat, r), target.send(plan('no-head'), chat, r), target.send(plan('slow'), chat, r)]);
    await target.close();
    expect(idle.error?.code).toBe('E_TIMEOUT_IDLE');
    expect(idle.textParts).toEqual([' a']);
    expect(head.error?.code).toBe('E_TIMEOUT_FIRST_BYTE');
    expect(total.error?.code).toBe('E_TIMEOUT_TOTAL');
    expect(total.textParts.length).toBeGreaterThan(3);
  });

  it('abortAll mid-stream: E_ABORTED with the reason; a refused connection: E_CONNECT', async () => {
    const { url } = await serve((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk(' a'));
    });
    const aborted = await send({ baseUrl: url, connections: 1, client: 'h1' }, req(), (t) => setTimeout(() => t.abortAll('user stop'), 100));
    expect(aborted.error).toEqual({ code: 'E_ABORTED', message: 'user stop' });
    const probe = createTcpServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const refused = await send({ baseUrl: `http://127.0.0.1:${port}`, connections: 1, client: 'h1' });
    expect(refused.error?.code).toBe('E_CONNECT');
  });

  it('connections are kept and reused; a Keep-Alive timeout shorter than the margin means one connection per request', async () => {
    const ok: Handler = (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(chunk(' a', 'length') + usage);
    };
    for (const [keepAliveS, want] of [[60, 1], [1, 5]] as const) {
      const { url, connections } = await serve(ok, (s) => (s.keepAliveTimeout = keepAliveS * 1000));
      const target = new HttpTarget({ baseUrl: url, connections: 4, client: 'h1' });
      for (let i = 0; i < 5; i++) expect((await target.send(chat.buildRequest(req()), chat, req())).error).toBeUndefined();
      await target.close();
      expect(connections(), `Keep-Alive: timeout=${keepAliveS}`).toBe(want);
    }
  });

  it('an idle connection the server closed is not picked again', async () => {
    const { url, connections } = await serve(
      (_q, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(chunk(' a', 'length') + usage);
      },
      (s) => (s.keepAliveTimeout = 100),
    );
    const target = new HttpTarget({ baseUrl: url, connections: 1, client: 'h1' });
    for (let i = 0; i < 3; i++) {
      expect((await target.send(chat.buildRequest(req()), chat, req())).error).toBeUndefined();
      await new Promise((r) => setTimeout(r, 250));
    }
    await target.close();
    expect(connections()).toBe(3);
  });

  it('a header with a line break is refused before anything is sent; a malformed reply is E_RESET', async () => {
    let seen = 0;
    const { url } = await serve((_q, res) => {
      seen++;
      res.end();
    });
    const bad = await send({ baseUrl: url, connections: 1, client: 'h1', apiKey: 'key\r\nx-evil: 1' });
    expect(bad.error?.code).toBe('E_CONFIG');
    expect(seen).toBe(0);
    const raw = createTcpServer((s) => s.on('data', () => s.end('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n')));
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
    const broken = await send({ baseUrl: `http://127.0.0.1:${(raw.address() as AddressInfo).port}`, connections: 1, client: 'h1' });
    raw.close();
    expect(broken.error?.code).toBe('E_RESET');
    expect(broken.error?.message).toMatch(/malformed HTTP response: bad chunk size/);
  });

  it('https: origins stay on undici (the h1 client is plain http only)', () => {
    const t = new HttpTarget({ baseUrl: 'https://127.0.0.1:1', connections: 1, client: 'h1' });
    expect((t as unknown as { client: { constructor: { name: string } } }).client.constructor.name).toBe('UndiciClient');
    void t.close();
  });
});
