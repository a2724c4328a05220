import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeEach, describe, expect, it } from 'vitest';
import { getDialect } from '../../src/dialects/index.js';
import { runBenchmark } from '../../src/load/benchmark.js';
import { createHttpStageRunner } from '../../src/load/http-runner.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import type { Timeouts } from '../../src/transport/exchange.js';
import { HttpTarget } from '../../src/transport/http.js';
import { createFixedLengthWorkload } from '../../src/workload/synthetic.js';

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

const chunk = (text: string): string => `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`;
const usage = (n: number): string => `data: ${JSON.stringify({ id: 'x', choices: [], usage: { prompt_tokens: 8, completion_tokens: n, total_tokens: 8 + n } })}\n\ndata: [DONE]\n\n`;

/** A purpose-built server for faults the simulator does not produce; every request body is drained first. */
async function withServer(handler: Handler, run: (url: string, close: () => Promise<void>) => Promise<void>): Promise<void> {
  let n = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req, res, n++));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const close = (): Promise<void> =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, close);
  } finally {
    if (server.listening) await close();
  }
}

/** The HTTP client under test (h1 or undici; both must classify every fault alike). */
let client: 'h1' | 'undici' = 'h1';

async function bench(url: string, requests: number, timeouts: Partial<Timeouts> = {}, concurrency = 4): Promise<RequestRecord[]> {
  const target = new HttpTarget({ baseUrl: url, connections: concurrency, timeouts, client });
  const records: RequestRecord[] = [];
  const runner = createHttpStageRunner({
    target, dialect: getDialect('openai-chat'), model: 'm', forceLength: true, stream: true, seed: 1, onRecord: (r) => records.push(r),
  });
  await runBenchmark({ profile: 'concurrent', concurrencies: [concurrency], limits: { maxRequests: requests }, workload: createFixedLengthWorkload(8, 4) }, runner);
  await target.close();
  // Measured requests only: the row's cool-down requests (sent after its window, while the load stays on) are left out.
  return records.filter((r) => r.cooldown !== true);
}

const codes = (records: RequestRecord[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const r of records) out[r.error?.code ?? 'ok'] = (out[r.error?.code ?? 'ok'] ?? 0) + 1;
  return out;
};

/** Every third request misbehaves; the others are normal 4-token streams. */
function everyThird(fault: (res: ServerResponse) => void): Handler {
  return (_req, res, n) => {
    if (n % 3 === 1) return fault(res);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(chunk('a') + chunk(' b') + chunk(' c') + chunk(' d') + usage(4));
  };
}

for (const which of ['h1', 'undici'] as const) describe(`fault matrix: purpose-built servers (${which} client)`, () => {
  beforeEach(() => {
    client = which;
  });

  it('no headers within the first-byte timeout → E_TIMEOUT_FIRST_BYTE', async () => {
    await withServer(everyThird(() => undefined), async (url) => {
      const r = codes(await bench(url, 9, { firstByteMs: 300 }));
      expect(r).toEqual({ ok: 6, E_TIMEOUT_FIRST_BYTE: 3 });
    });
  });

  it('a stream longer than the whole-request timeout → E_TIMEOUT_TOTAL', async () => {
    const slow = (res: ServerResponse): void => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const t = setInterval(() => (res.destroyed ? clearInterval(t) : res.write(chunk(' x'))), 50);
    };
    await withServer(everyThird(slow), async (url) => {
      const r = codes(await bench(url, 6, { totalMs: 400, idleMs: 1000 }));
      expect(r).toEqual({ ok: 4, E_TIMEOUT_TOTAL: 2 });
    });
  });

  it('connection refused after the server goes away → E_CONNECT, finished requests kept', async () => {
    let served = 0;
    await withServer(
      (_req, res) => {
        served++;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(chunk('a') + usage(1));
      },
      async (url, close) => {
        const target = new HttpTarget({ baseUrl: url, connections: 1, timeouts: { connectMs: 1000 }, client });
        const records: RequestRecord[] = [];
        const runner = createHttpStageRunner({ target, dialect: getDialect('openai-chat'), model: 'm', forceLength: true, stream: true, seed: 1, onRecord: (r) => records.push(r) });
        const run = runBenchmark({ profile: 'constant', rates: [20], limits: { maxSeconds: 1 }, workload: createFixedLengthWorkload(8, 1) }, runner);
        await new Promise((r) => setTimeout(r, 400));
        await close();
        await run;
        await target.close();
        // Measured requests only (the cool-down after the 1 s window starts with the server long gone).
        const c = codes(records.filter((r) => r.cooldown !== true));
        expect(c['ok']).toBe(served);
        expect((c['E_CONNECT'] ?? 0) + (c['E_RESET'] ?? 0)).toBe(records.filter((r) => r.cooldown !== true).length - served);
        expect(c['E_CONNECT']).toBeGreaterThan(0);
      },
    );
  });

  it('a 10 MB chunk is read whole and counted, without disturbing the others', async () => {
    const big = 'y'.repeat(10 * 1024 * 1024);
    const huge = (res: ServerResponse): void => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(chunk(big) + usage(1));
    };
    await withServer(everyThird(huge), async (url) => {
      const records = await bench(url, 6);
      expect(codes(records)).toEqual({ ok: 6 });
      expect(records.map((r) => r.outputTokens).sort()).toEqual([1, 1, 4, 4, 4, 4]);
    });
  });

  it('wrong content-type: a JSON body where a stream was asked for → E_STREAM_PARSE naming what came', async () => {
    const wrong = (res: ServerResponse): void => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"choices":[{"message":{"content":"hi"}}]}');
    };
    await withServer(everyThird(wrong), async (url) => {
      const records = await bench(url, 6);
      expect(codes(records)).toEqual({ ok: 4, E_STREAM_PARSE: 2 });
      expect(records.find((r) => r.error)?.error?.message).toMatch(/not a sse stream: it starts with "\{\\"choices/);
    });
  });

  it('a server that closes every keep-alive connection → all requests succeed on new connections', async () => {
    await withServer(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream', connection: 'close' });
        res.end(chunk('a') + chunk(' b') + usage(2));
      },
      async (url) => {
        expect(codes(await bench(url, 40, {}, 4))).toEqual({ ok: 40 });
      },
    );
  });
});
