import { createServer, type Server } from 'node:http';
import { json, readBody } from './http-util.js';
import type { AddressInfo } from 'node:net';

/** A small real OpenAI-compatible streaming server with fixed, known delays (tests only). */
export interface FixedDelayServer {
  url: string;
  requests: number;
  /** What the server actually did, on the shared performance.now() clock: request read, then each token write. */
  truth: Array<{ id: string; receivedAtMs: number; writesMs: number[] }>;
  close(): Promise<void>;
}

export interface FixedDelayOptions {
  ttftMs: number;
  itlMs: number;
  model?: string;
  /** Prompt tokens reported in usage (the server does not tokenize). */
  promptTokens?: number;
  /** Reply to every generation with this status and body instead. */
  failWith?: { status: number; body: string };
}

export async function startFixedDelayServer(opts: FixedDelayOptions): Promise<FixedDelayServer> {
  const model = opts.model ?? 'test-model';
  const state = { requests: 0 };
  const truth: FixedDelayServer['truth'] = [];
  const server: Server = createServer((req, res) => {
    res.socket?.setNoDelay(true);
    if (req.method === 'GET' && req.url === '/v1/models') {
      return json(res, 200, { object: 'list', data: [{ id: model, object: 'model', owned_by: 'test' }] });
    }
    if (req.method !== 'POST' || !/^\/v1\/(chat\/)?completions$/.test(req.url ?? '')) {
      return json(res, 404, { error: { message: `no route ${req.url}`, type: 'not_found' } });
    }
    void readBody(req).then((raw) => {
      state.requests++;
      const seen = { id: String(state.requests), receivedAtMs: performance.now(), writesMs: [] as number[] };
      if (opts.failWith) {
        res.writeHead(opts.failWith.status, { 'content-type': 'application/json' });
        return res.end(opts.failWith.body);
      }
      const body = JSON.parse(raw) as { max_tokens?: number; stream?: boolean; stream_options?: { include_usage?: boolean } };
      const n = body.max_tokens ?? 16;
      const chat = req.url === '/v1/chat/completions';
      const usage = { prompt_tokens: opts.promptTokens ?? 10, completion_tokens: n, total_tokens: (opts.promptTokens ?? 10) + n };
      if (!body.stream) {
        setTimeout(() => {
          const text = Array.from({ length: n }, (_, i) => ` w${i}`).join('');
          json(res, 200, {
            id: 'x',
            object: chat ? 'chat.completion' : 'text_completion',
            model,
            choices: [chat ? { index: 0, message: { role: 'assistant', content: text }, finish_reason: 'length' } : { index: 0, text, finish_reason: 'length' }],
            usage,
          });
        }, opts.ttftMs + opts.itlMs * (n - 1));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': seen.id });
      res.flushHeaders();
      const chunk = (i: number): string => {
        const choice = chat
          ? { index: 0, delta: { content: ` w${i}` }, finish_reason: i === n - 1 ? 'length' : null }
          : { index: 0, text: ` w${i}`, finish_reason: i === n - 1 ? 'length' : null };
        return `data: ${JSON.stringify({ id: 'x', object: chat ? 'chat.completion.chunk' : 'text_completion', model, choices: [choice] })}\n\n`;
      };
      if (chat) res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', model, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`);
      const start = performance.now();
      let i = 0;
      const emit = (): void => {
        if (res.destroyed) return;
        res.write(chunk(i), () => seen.writesMs.push(performance.now()));
        i++;
        if (i < n) return schedule();
        if (body.stream_options?.include_usage) {
          res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', model, choices: [], usage })}\n\n`);
        }
        res.end('data: [DONE]\n\n');
        truth.push(seen);
      };
      // Absolute deadlines, so timer lateness does not accumulate across tokens.
      const schedule = (): void => {
        const due = start + opts.ttftMs + opts.itlMs * i;
        setTimeout(emit, Math.max(0, due - performance.now()));
      };
      schedule();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    truth,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
