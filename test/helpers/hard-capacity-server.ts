import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { json, readBody, trackedTimers } from './http-util.js';

/**
 * A test server with a hard capacity, for capacity-search tests whose decisions must not depend on the host's timing:
 * up to `slots` requests are served at once, first token after `prefillMs`, then one token every `tokenMs`; a request
 * that arrives while `slots` requests are already in the server waits `overflowMs` before its first token (and
 * holds no slot meanwhile). With `overflowMs` far above the SLO and `prefillMs` far below it, a probe within capacity
 * meets the SLO by a wide margin and one past it misses it by a wide margin, whatever the load on the machine:
 * with N slots, N streams never overflow (a stream sends its next request after the server ended the last one), and
 * N + 1 streams overflow on nearly every request.
 * It answers /v1/models and /metrics (llama.cpp's gauge names), so a run waits for it to be idle between rows.
 */
export interface HardCapacityOptions {
  slots: number;
  prefillMs: number;
  tokenMs: number;
  overflowMs: number;
}

export interface HardCapacityServer {
  url: string;
  stats: { received: number; overflowed: number };
  close(): Promise<void>;
}

export async function startHardCapacityServer(opts: HardCapacityOptions): Promise<HardCapacityServer> {
  let inServer = 0;
  const stats = { received: 0, overflowed: 0 };
  const { later, clearAll: clearTimers } = trackedTimers();
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/v1/models') return json(res, 200, { object: 'list', data: [{ id: 'hard-model', object: 'model', owned_by: 'test' }] });
    if (req.method === 'GET' && req.url === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return res.end(`# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing ${inServer}\n# TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred 0\n`);
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return json(res, 404, { error: { message: `no route ${req.url}` } });
    void readBody(req).then((raw) => {
      stats.received++;
      const overflow = inServer >= opts.slots;
      if (overflow) stats.overflowed++;
      inServer++;
      const body = JSON.parse(raw) as { max_tokens?: number; stream_options?: { include_usage?: boolean } };
      const n = body.max_tokens ?? 16;
      const gone = (): boolean => res.destroyed || res.writableEnded;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      let i = 0;
      const step = (): void => {
        if (!gone()) {
          const choice = { index: 0, delta: { content: ` t${i}` }, finish_reason: i === n - 1 ? 'length' : null };
          res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', model: 'hard-model', choices: [choice] })}\n\n`);
        }
        i++;
        if (i < n) return later(opts.tokenMs, step);
        // Out of the server before the reply ends: the client's next request never finds this one still counted.
        inServer--;
        if (gone()) return;
        if (body.stream_options?.include_usage) {
          const usage = { prompt_tokens: 32, completion_tokens: n, total_tokens: 32 + n };
          res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', model: 'hard-model', choices: [], usage })}\n\n`);
        }
        res.end('data: [DONE]\n\n');
      };
      later(opts.prefillMs + (overflow ? opts.overflowMs : 0), step);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        clearTimers();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
