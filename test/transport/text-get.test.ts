import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createTextGetter } from '../../src/transport/text-get.js';
import { TelemetrySampler } from '../../src/transport/telemetry.js';

const servers: Array<Server | TcpServer> = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    if ('closeAllConnections' in s) s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; connections: () => number; requests: IncomingMessage[] }> {
  let connections = 0;
  const requests: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    requests.push(req);
    handler(req, res);
  });
  server.on('connection', () => connections++);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections, requests };
}

/** A TCP server that answers each connection's bytes with `reply` (or nothing). */
async function rawServe(onData: (socket: Socket, n: number) => void): Promise<string> {
  let n = 0;
  const server = createTcpServer((socket) => socket.on('data', () => onData(socket, ++n)));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const METRICS = `# HELP vllm:num_requests_running running\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name="m"} 7.0\nvllm:num_requests_waiting{model_name="m"} 2.0\n# é 日本\n`;

describe('text getter (telemetry /metrics over one kept-alive connection)', () => {
  it('reads Content-Length and chunked bodies, whole UTF-8, on one connection, with the given headers', async () => {
    let i = 0;
    const s = await serve((_req, res) => {
      const body = Buffer.from(METRICS.repeat(400));
      if (i++ % 2 === 0) {
        res.writeHead(200, { 'content-length': body.length });
        res.end(body);
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' });
        // chunked, written in pieces that split a multi-byte character
        res.write(body.subarray(0, 101));
        setTimeout(() => res.end(body.subarray(101)), 2);
      }
    });
    const g = createTextGetter(`${s.url}/metrics`, { authorization: 'Bearer k' });
    try {
      for (let k = 0; k < 4; k++) expect(await g.get(5000)).toBe(METRICS.repeat(400));
    } finally {
      g.close();
    }
    expect(s.connections()).toBe(1);
    expect(s.requests.map((r) => [r.method, r.url, r.headers.authorization])).toEqual(Array(4).fill(['GET', '/metrics', 'Bearer k']));
  });

  it('gives undefined for a non-2xx reply and keeps working after it', async () => {
    let i = 0;
    const s = await serve((_req, res) => {
      if (i++ === 0) {
        res.writeHead(500);
        res.end('boom');
      } else res.end('ok');
    });
    const g = createTextGetter(`${s.url}/metrics`, {});
    try {
      expect(await g.get(5000)).toBeUndefined();
      expect(await g.get(5000)).toBe('ok');
    } finally {
      g.close();
    }
  });

  it('gives undefined when the server never answers (timeout), when it closes mid-body, and when nothing listens', async () => {
    const silent = await rawServe(() => {});
    const g1 = createTextGetter(`${silent}/metrics`, {});
    expect(await g1.get(50)).toBeUndefined();
    g1.close();

    const cut = await rawServe((socket) => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly part');
      socket.end();
    });
    const g2 = createTextGetter(`${cut}/metrics`, {});
    expect(await g2.get(5000)).toBeUndefined();
    g2.close();

    const closed = createTcpServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const g3 = createTextGetter(`http://127.0.0.1:${port}/metrics`, {});
    expect(await g3.get(5000)).toBeUndefined();
    g3.close();
  });

  it('reads a body delimited by the close, and retries once on a kept-alive connection the server closed before replying', async () => {
    const untilClose = await rawServe((socket) => socket.end('HTTP/1.1 200 OK\r\n\r\nwhole body'));
    const g1 = createTextGetter(`${untilClose}/metrics`, {});
    expect(await g1.get(5000)).toBe('whole body');
    expect(await g1.get(5000)).toBe('whole body');
    g1.close();

    // The first connection answers once and then closes on the next request without a byte (an idle timeout's race).
    const racy = await rawServe((socket, n) => {
      if (n === 2) socket.destroy();
      else socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhi');
    });
    const g2 = createTextGetter(`${racy}/metrics`, {});
    expect(await g2.get(5000)).toBe('hi');
    expect(await g2.get(5000)).toBe('hi');
    g2.close();
  });

  it('serves calls made while one is in flight in turn', async () => {
    let n = 0;
    const s = await serve((_req, res) => {
      const k = ++n;
      setTimeout(() => res.end(`reply ${k}`), 5);
    });
    const g = createTextGetter(`${s.url}/metrics`, {});
    try {
      expect(await Promise.all([g.get(5000), g.get(5000), g.get(5000)])).toEqual(['reply 1', 'reply 2', 'reply 3']);
    } finally {
      g.close();
    }
    expect(s.connections()).toBe(1);
  });
});

describe('telemetry sampler', () => {
  it('reads the gauges of a vLLM-style /metrics and says when a server has none', async () => {
    const s = await serve((req, res) => res.end(req.url === '/metrics' ? METRICS : 'no'));
    const t = new TelemetrySampler(s.url, undefined, 60_000);
    try {
      expect(await t.start()).toBe(true);
      const now = await t.readNow();
      expect([now?.running, now?.waiting]).toEqual([7, 2]);
    } finally {
      t.stop();
    }
    const none = await serve((_req, res) => {
      res.writeHead(404);
      res.end();
    });
    const t2 = new TelemetrySampler(none.url, undefined, 60_000);
    expect(await t2.start()).toBe(false);
    t2.stop();
  });
});
