import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A raw-TCP OpenAI /v1/completions server that behaves like llama-server (cpp-httplib): every reply says
 * `Connection: keep-alive` and `Keep-Alive: timeout=5, max=100`, yet the server closes the connection a
 * moment after each reply ends. A client that reuses the connection in that moment writes a request the
 * server never reads (tests only).
 */
export interface ClosingServerOptions {
  /** Time to the first token, ms (default 2). */
  ttftMs?: number;
  /** Time between tokens, ms (default 1). */
  itlMs?: number;
  /** Delay between the end of a reply and the close, ms (default 3: long enough that a prompt next request lands on the dying connection). */
  closeDelayMs?: number;
  /** false: a well-behaved keep-alive server that keeps its connections (default true: close after each reply). */
  closeAfterResponse?: boolean;
  /** Requests (0-based, in the order the server read them) that it reads and then drops, closing the connection without a reply. */
  dropAfterReading?: (index: number) => boolean;
}

export interface ClosingServer {
  url: string;
  /** Requests the server read (answered or dropped). */
  readonly received: number;
  /** Requests answered with a whole reply. */
  readonly answered: number;
  /** Connections that carried bytes after their reply, closed unread: requests the server never received. */
  readonly unread: number;
  readonly connections: number;
  /** The request's Connection header, per request read. */
  readonly connectionHeaders: string[];
  close(): Promise<void>;
}

interface Parsed {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  rest: Buffer;
}

/** One HTTP/1.1 request from the head of `buf` (Content-Length bodies only), or undefined when incomplete. */
function parseRequest(buf: Buffer): Parsed | undefined {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const [method = '', path = ''] = (lines[0] ?? '').split(' ');
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  if (buf.length < end + 4 + length) return undefined;
  return {
    method,
    path,
    headers,
    body: buf.subarray(end + 4, end + 4 + length).toString('utf8'),
    rest: buf.subarray(end + 4 + length),
  };
}

const KEEP_ALIVE = 'Connection: keep-alive\r\nKeep-Alive: timeout=5, max=100\r\n';
const chunked = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;

export async function startClosingServer(opts: ClosingServerOptions = {}): Promise<ClosingServer> {
  const ttftMs = opts.ttftMs ?? 2;
  const itlMs = opts.itlMs ?? 1;
  const closeDelayMs = opts.closeDelayMs ?? 3;
  const closeAfterResponse = opts.closeAfterResponse ?? true;
  const state = { received: 0, answered: 0, unread: 0, connections: 0 };
  const connectionHeaders: string[] = [];
  const sockets = new Set<Socket>();

  const handle = (socket: Socket): void => {
    state.connections++;
    sockets.add(socket);
    socket.setNoDelay(true);
    let buf: Buffer = Buffer.alloc(0);
    let busy = false;
    let doneWithConnection = false;
    let sawUnread = false;

    const finishReply = (): void => {
      state.answered++;
      busy = false;
      if (closeAfterResponse) {
        doneWithConnection = true;
        setTimeout(() => socket.destroy(), closeDelayMs);
      } else next();
    };
    const next = (): void => {
      if (busy || doneWithConnection) return;
      const req = parseRequest(buf);
      if (!req) return;
      buf = req.rest;
      busy = true;
      const index = state.received++;
      connectionHeaders.push(req.headers['connection'] ?? '');
      if (opts.dropAfterReading?.(index)) {
        doneWithConnection = true;
        socket.destroy();
        return;
      }
      reply(socket, req, finishReply);
    };
    const reply = (s: Socket, req: Parsed, done: () => void): void => {
      if (req.method === 'GET' && req.path === '/v1/models') {
        const body = JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model', owned_by: 'llamacpp' }] });
        s.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n${KEEP_ALIVE}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
        return done();
      }
      if (req.method !== 'POST' || req.path !== '/v1/completions') {
        const body = JSON.stringify({ error: { message: `no route ${req.path}`, type: 'not_found' } });
        s.write(`HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n${KEEP_ALIVE}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
        return done();
      }
      const params = JSON.parse(req.body) as { max_tokens?: number; stream_options?: { include_usage?: boolean } };
      const n = params.max_tokens ?? 8;
      const usage = { prompt_tokens: 8, completion_tokens: n, total_tokens: 8 + n };
      s.write(`HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n${KEEP_ALIVE}Transfer-Encoding: chunked\r\n\r\n`);
      const start = performance.now();
      let i = 0;
      const emit = (): void => {
        if (s.destroyed) return;
        const choice = { index: 0, text: ` w${i}`, finish_reason: i === n - 1 ? 'length' : null };
        s.write(chunked(`data: ${JSON.stringify({ id: 'x', object: 'text_completion', model: 'm', choices: [choice] })}\n\n`));
        i++;
        if (i < n) {
          setTimeout(emit, Math.max(0, start + ttftMs + itlMs * i - performance.now()));
          return;
        }
        let tail = '';
        if (params.stream_options?.include_usage) tail += `data: ${JSON.stringify({ id: 'x', object: 'text_completion', model: 'm', choices: [], usage })}\n\n`;
        tail += 'data: [DONE]\n\n';
        s.write(`${chunked(tail)}0\r\n\r\n`);
        done();
      };
      setTimeout(emit, ttftMs);
    };

    socket.on('data', (d: Buffer) => {
      if (doneWithConnection) {
        // Bytes after the reply on a connection the server is closing: a request it will never read.
        if (!sawUnread) state.unread++;
        sawUnread = true;
        return;
      }
      buf = Buffer.concat([buf, d]);
      next();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  };

  const server: Server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get received() {
      return state.received;
    },
    get answered() {
      return state.answered;
    },
    get unread() {
      return state.unread;
    },
    get connections() {
      return state.connections;
    },
    connectionHeaders,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
