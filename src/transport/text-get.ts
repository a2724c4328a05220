import { connect, type Socket } from 'node:net';
import { ResponseReader, type ResponseSink } from './h1-response.js';

/**
 * Reads one small text resource (the server's Prometheus /metrics) again and again, as the telemetry sampler
 * does twice a second during a run. Plain http: goes over one kept-alive socket read by h1-response.ts: a
 * 28 KB vLLM-sized body then costs the client about a tenth of what `fetch` costs (undici's fetch spent
 * ~2 ms of CPU per GET here, 0.3–1 µs per streamed token at 4,000–12,000 tokens/s; bench/README.md). https:
 * (and anything else) goes through `fetch`.
 */
export interface TextGetter {
  /**
   * The body of a 2xx reply; undefined on another status, a failure, or no reply within `timeoutMs` (counted
   * from when this GET goes out: calls made while one is in flight wait their turn).
   */
  get(timeoutMs: number): Promise<string | undefined>;
  close(): void;
}

export function createTextGetter(url: string, headers: Record<string, string>): TextGetter {
  const u = new URL(url);
  return u.protocol === 'http:' ? new PlainHttpGetter(u, headers) : fetchGetter(url, headers);
}

function fetchGetter(url: string, headers: Record<string, string>): TextGetter {
  return {
    async get(timeoutMs) {
      try {
        const res = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
        return res.ok ? await res.text() : undefined;
      } catch {
        return undefined;
      }
    },
    close() {},
  };
}

/** One GET in flight on the socket. */
interface Pending {
  done: (body: string | undefined) => void;
  parts: Buffer[];
  status: number;
  /** The socket had carried a reply before: a close before any byte may be the server's idle timeout (retry once). */
  reused: boolean;
  timer: NodeJS.Timeout;
  timeoutMs: number;
}

class PlainHttpGetter implements TextGetter, ResponseSink {
  private socket: Socket | undefined;
  private readonly reader = new ResponseReader();
  private readonly request: string;
  private pending: Pending | undefined;
  private replies = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly url: URL,
    headers: Record<string, string>,
  ) {
    let head = `GET ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\naccept: text/plain, */*\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    this.request = `${head}connection: keep-alive\r\n\r\n`;
  }

  get(timeoutMs: number): Promise<string | undefined> {
    const next = this.queue.then(() => new Promise<string | undefined>((resolve) => (this.closed ? resolve(undefined) : this.start(resolve, timeoutMs, true))));
    this.queue = next;
    return next;
  }

  close(): void {
    this.closed = true;
    this.settle(undefined);
    this.drop();
  }

  head(status: number): void {
    if (this.pending) this.pending.status = status;
    this.replies++;
  }

  body(buf: Buffer, start: number, end: number): void {
    // 'data' chunks are fresh buffers (no shared read buffer here): a view is enough.
    this.pending?.parts.push(buf.subarray(start, end));
  }

  complete(): void {
    const p = this.pending;
    if (!p) return;
    this.settle(p.status >= 200 && p.status < 300 ? Buffer.concat(p.parts).toString('utf8') : undefined);
    if (!this.reader.keepAlive) this.drop();
  }

  private start(resolve: (body: string | undefined) => void, timeoutMs: number, mayRetry: boolean): void {
    const reused = this.socket !== undefined && this.replies > 0;
    const timer = setTimeout(() => {
      this.settle(undefined);
      this.drop();
    }, timeoutMs);
    const done = (body: string | undefined): void => {
      clearTimeout(timer);
      resolve(body);
    };
    this.pending = { done, parts: [], status: 0, reused: reused && mayRetry, timer, timeoutMs };
    this.reader.reset();
    const socket = this.socket ?? this.open();
    // A GET in flight keeps the process alive (as fetch's socket does); an idle socket does not.
    socket.ref();
    socket.write(this.request);
  }

  private open(): Socket {
    this.replies = 0;
    const socket = connect({ host: this.url.hostname.replace(/^\[|\]$/g, ''), port: Number(this.url.port || 80), noDelay: true });
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      if (this.socket !== socket) return;
      if (!this.pending) return this.drop(); // bytes nobody asked for: the connection's state is unknown
      if (!this.reader.feed(chunk, chunk.length, this)) {
        this.settle(undefined);
        this.drop();
      }
    });
    socket.on('error', () => this.lost(socket));
    socket.on('close', () => this.lost(socket));
    return socket;
  }

  /** The socket closed or failed: a body delimited by the close ends here; a reused socket closed before any byte is retried once. */
  private lost(socket: Socket): void {
    if (this.socket !== socket) return;
    const p = this.pending;
    const ended = p !== undefined && this.reader.closeEnds(this);
    this.drop();
    if (!p || ended || this.pending !== p) return;
    if (p.reused && !this.reader.replyStarted) {
      clearTimeout(p.timer);
      this.pending = undefined;
      // On a fresh socket, with the same limit (the first try ended at once, on the close).
      this.start(p.done, p.timeoutMs, false);
      return;
    }
    this.settle(undefined);
  }

  private settle(body: string | undefined): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    this.socket?.unref();
    p.done(body);
  }

  private drop(): void {
    const s = this.socket;
    this.socket = undefined;
    s?.destroy();
  }
}
