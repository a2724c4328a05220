/**
 * Child process for bench/overhead.ts: a tiny OpenAI completions server that paces tokens like a real engine
 * (first token after --ttft-ms, then one every --itl-ms), so that its CPU is not counted as the client's.
 * Each token is its own SSE frame in its own write on a no-delay socket, so it reaches the client as its own
 * packet (one read per token, as with vLLM or SGLang); the frames copy vLLM's completions chunks, then a
 * usage chunk and `[DONE]`. With --burst every frame of a reply goes out in one write after --ttft-ms.
 *
 *   tsx bench/_paced-server.ts [--ttft-ms 20] [--itl-ms 10] [--burst]   → prints "listening at http://…"
 *
 * It also answers GET /v1/models and GET /metrics (a body of vLLM's size and shape, with live running and
 * waiting gauges: _paced-metrics.ts), so `inferbench run` polls telemetry as it does against vLLM.
 *
 * IPC: 'usage' → { usage: { user, system }, tokens, replyTokens } (this process's CPU µs; token frames written so far;
 * the token frames of the replies it wrote whole, leaving out those a client cancelled midway).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { vllmSizedMetrics } from './_paced-metrics.js';

function arg(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  const v = at === -1 ? NaN : Number(process.argv[at + 1]);
  return Number.isFinite(v) ? v : fallback;
}

const TTFT_MS = arg('--ttft-ms', 20);
const ITL_MS = arg('--itl-ms', 10);
const BURST = process.argv.includes('--burst');
const MODEL = 'paced-model';
// A fixed vocabulary of short words (1 token each for any BPE) so every frame has the same shape.
const WORDS = [' the', ' a', ' story', ' of', ' time', ',', ' and', ' then'];

let served = 0;
/** Token frames written (the client's work is counted per token it received). */
let tokensWritten = 0;
/** Token frames of whole replies (written to their end): a reply the client cancelled midway adds none. */
let replyTokens = 0;
let running = 0;

function frame(id: string, created: number, i: number, last: boolean): string {
  const text = JSON.stringify(WORDS[i % WORDS.length]);
  return `data: {"id":"${id}","object":"text_completion","created":${created},"model":"${MODEL}","choices":[{"index":0,"text":${text},"logprobs":null,"finish_reason":${last ? '"length"' : 'null'},"stop_reason":null}],"usage":null}\n\n`;
}

function usageFrame(id: string, created: number, promptTokens: number, n: number): string {
  const usage = `{"prompt_tokens":${promptTokens},"total_tokens":${promptTokens + n},"completion_tokens":${n}}`;
  return `data: {"id":"${id}","object":"text_completion","created":${created},"model":"${MODEL}","choices":[],"usage":${usage}}\n\n`;
}

const DONE = 'data: [DONE]\n\n';

function stream(res: ServerResponse, n: number, promptTokens: number): void {
  const id = `cmpl-${(++served).toString(16).padStart(32, '0')}`;
  const created = Math.floor(Date.now() / 1000);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': id });
  res.flushHeaders();
  const start = performance.now();
  if (BURST) {
    setTimeout(() => {
      let all = '';
      for (let i = 0; i < n; i++) all += frame(id, created, i, i === n - 1);
      tokensWritten += n;
      replyTokens += n;
      res.end(all + usageFrame(id, created, promptTokens, n) + DONE);
    }, TTFT_MS);
    return;
  }
  let i = 0;
  // Each write is due at an absolute time (start + TTFT + i × ITL), so timer lateness does not add up.
  const emit = (): void => {
    if (res.destroyed) return;
    res.write(frame(id, created, i, i === n - 1));
    tokensWritten++;
    i++;
    if (i < n) {
      setTimeout(emit, Math.max(0, start + TTFT_MS + i * ITL_MS - performance.now()));
      return;
    }
    res.write(usageFrame(id, created, promptTokens, n));
    res.end(DONE);
    replyTokens += n;
  };
  setTimeout(emit, TTFT_MS);
}

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  res.socket?.setNoDelay(true);
  if (req.method === 'GET' && req.url === '/v1/models') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data: [{ id: MODEL, object: 'model', owned_by: 'paced', max_model_len: 4096 }] }));
    return;
  }
  if (req.method === 'GET' && req.url === '/metrics') {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
    res.end(vllmSizedMetrics(MODEL, running, served, tokensWritten));
    return;
  }
  if (req.method !== 'POST' || req.url !== '/v1/completions') {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}`, type: 'not_found' } }));
    return;
  }
  const parts: Buffer[] = [];
  req.on('data', (d: Buffer) => parts.push(d));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { max_tokens?: number; prompt?: string };
    const n = Math.max(1, body.max_tokens ?? 16);
    running++;
    res.once('close', () => running--);
    stream(res, n, Math.max(1, (body.prompt ?? '').split(/\s+/).length));
  });
});
server.keepAliveTimeout = 60_000;
server.maxRequestsPerSocket = 0;

process.on('message', (m: unknown) => {
  if (m === 'usage') {
    const c = process.cpuUsage();
    process.send?.({ usage: { user: c.user, system: c.system }, tokens: tokensWritten, replyTokens });
  }
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`paced server (${BURST ? 'burst' : `ttft ${TTFT_MS} ms, itl ${ITL_MS} ms`}) listening at http://127.0.0.1:${port} \n`);
});
