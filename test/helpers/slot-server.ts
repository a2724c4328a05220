import { createServer, type Server, type ServerResponse } from 'node:http';
import { json, readBody, trackedTimers } from './http-util.js';
import type { AddressInfo } from 'node:net';

/**
 * A small engine-like server for tests, behaving as llama.cpp's llama-server does where inferbench went wrong:
 * - `slots` requests run at once; the rest wait in a FIFO queue;
 * - a request whose client has gone away is still served (its slot is busy until it would have finished);
 * - a prefix cache: a prompt whose first `cacheKeyChars` characters were seen before is answered with its
 *   prompt "cached" (`usage.prompt_tokens_details.cached_tokens`, and no prefill time);
 * - Prometheus gauges at /metrics with llama.cpp's names (requests_processing / requests_deferred).
 * Time per request: prefill `prefillMs` (0 when cached), then one token every `tokenMs`.
 */
export interface SlotServerOptions {
  slots: number;
  prefillMs: number;
  tokenMs: number;
  /** Prompt tokens reported in usage. */
  promptTokens?: number;
  cacheKeyChars?: number;
  /** Whether /metrics exists. */
  metrics?: boolean;
  /** Cached tokens reported for an uncached prompt: the first word it shares with the slot's last one (llama.cpp: 1). */
  chanceCachedTokens?: number;
}

export interface SlotServer {
  url: string;
  /** Requests received, and how many of them were answered from the prefix cache. */
  stats: {
    received: number;
    cacheHits: number;
    abandonedServed: number;
    maxWaiting: number;
    /** Requests answered to a live client that arrived while the server still ran or queued one whose client had gone away. */
    arrivedOnAbandoned: number;
  };
  running(): number;
  waiting(): number;
  close(): Promise<void>;
}

interface Job {
  /** A request whose client had gone away was still running or queued when this one arrived. */
  sawAbandoned: boolean;
  n: number;
  cached: boolean;
  res: ServerResponse;
  chat: boolean;
  usageChunk: boolean;
}

export async function startSlotServer(opts: SlotServerOptions): Promise<SlotServer> {
  const promptTokens = opts.promptTokens ?? 64;
  const keyChars = opts.cacheKeyChars ?? 48;
  const seen = new Set<string>();
  const queue: Job[] = [];
  let running = 0;
  const stats = { received: 0, cacheHits: 0, abandonedServed: 0, maxWaiting: 0, arrivedOnAbandoned: 0 };
  const active = new Set<Job>();
  const abandoned = (j: Job): boolean => j.res.destroyed || j.res.writableEnded;
  const { later, clearAll: clearTimers } = trackedTimers();

  const start = (job: Job): void => {
    running++;
    active.add(job);
    const { res } = job;
    const gone = (): boolean => res.destroyed || res.writableEnded;
    const write = (s: string): void => {
      if (!gone()) res.write(s);
    };
    if (!gone()) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
    }
    let i = 0;
    const step = (): void => {
      const text = ` t${i}`;
      const choice = job.chat
        ? { index: 0, delta: { content: text }, finish_reason: i === job.n - 1 ? 'length' : null }
        : { index: 0, text, finish_reason: i === job.n - 1 ? 'length' : null };
      write(`data: ${JSON.stringify({ id: 'x', object: 'text_completion', model: 'slot-model', choices: [choice] })}\n\n`);
      i++;
      if (i < job.n) return later(opts.tokenMs, step);
      const usage = {
        prompt_tokens: promptTokens,
        completion_tokens: job.n,
        total_tokens: promptTokens + job.n,
        prompt_tokens_details: { cached_tokens: job.cached ? promptTokens - 1 : (opts.chanceCachedTokens ?? 0) },
      };
      if (job.usageChunk) write(`data: ${JSON.stringify({ id: 'x', object: 'text_completion', model: 'slot-model', choices: [], usage })}\n\n`);
      if (gone()) stats.abandonedServed++;
      else {
        res.end('data: [DONE]\n\n');
        if (job.sawAbandoned) stats.arrivedOnAbandoned++;
      }
      running--;
      active.delete(job);
      const next = queue.shift();
      if (next) start(next);
    };
    later(job.cached ? 1 : opts.prefillMs, step);
  };

  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/v1/models') {
      return json(res, 200, { object: 'list', data: [{ id: 'slot-model', object: 'model', owned_by: 'test' }] });
    }
    if (req.method === 'GET' && req.url === '/metrics') {
      if (!opts.metrics) return json(res, 404, { error: 'no metrics' });
      res.writeHead(200, { 'content-type': 'text/plain' });
      return res.end(`# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing ${running}\n# TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred ${queue.length}\n`);
    }
    if (req.method !== 'POST' || !/^\/v1\/(chat\/)?completions$/.test(req.url ?? '')) {
      return json(res, 404, { error: { message: `no route ${req.url}` } });
    }
    void readBody(req).then((raw) => {
      stats.received++;
      // Counted when it is answered: a request cut with the others may be read before its own socket's close is seen.
      const sawAbandoned = [...active, ...queue].some(abandoned);
      const body = JSON.parse(raw) as { prompt?: string; messages?: Array<{ content: string }>; max_tokens?: number; stream_options?: { include_usage?: boolean } };
      const prompt = body.prompt ?? body.messages?.map((m) => m.content).join('\n') ?? '';
      const key = prompt.slice(0, keyChars);
      const cached = seen.has(key);
      if (cached) stats.cacheHits++;
      seen.add(key);
      const job: Job = { sawAbandoned, n: body.max_tokens ?? 16, cached, res, chat: req.url === '/v1/chat/completions', usageChunk: body.stream_options?.include_usage === true };
      if (running < opts.slots) start(job);
      else {
        queue.push(job);
        stats.maxWaiting = Math.max(stats.maxWaiting, queue.length);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stats,
    running: () => running,
    waiting: () => queue.length,
    close: () =>
      new Promise<void>((resolve) => {
        clearTimers();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
