import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { ReuseRule } from './connection-reuse.js';
import type { ExchangeRecorder } from './exchange-recorder.js';
import { ResponseReader, type ResponseSink } from './h1-response.js';

/**
 * Every socket of this thread reads into this one buffer (net's `onread`): each read is consumed before
 * the next, so a streamed token costs no buffer allocation, no Readable stream and no 'data' event.
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/** What a connection reports to the client that owns it (h1-client.ts). */
export interface ConnectionOwner {
  readonly rule: ReuseRule;
  connected(c: Connection): void;
  completed(c: Connection, a: Attempt, clean: boolean): void;
  broken(c: Connection, a: Attempt, why: string): void;
  lost(c: Connection, code: string, message: string): void;
}

/** One request attempt (a retry is a new attempt of the same recorder). */
export interface Attempt {
  rec: ExchangeRecorder;
  /** Request line and headers without the Connection header, then the body. */
  head: string;
  body: string;
  signal: AbortSignal | undefined;
  retries: number;
  conn: Connection | undefined;
  /** The connection had carried a reply before this attempt was written on it. */
  reused: boolean;
  writtenAtMs: number;
  firstWrittenAtMs: number;
  lastReadAtMs: number;
}

/** One kept-alive TCP connection; it is the reader's sink for the attempt it carries. */
export class Connection implements ResponseSink {
  readonly reader = new ResponseReader();
  replies = 0;
  connected = false;
  readonly openedAtMs = performance.now();
  expiresAtMs = Infinity;
  attempt: Attempt | undefined;
  now = 0;
  readonly socket: Socket;

  constructor(
    host: string,
    port: number,
    private readonly client: ConnectionOwner,
  ) {
    this.socket = connect({
      host,
      port,
      noDelay: true,
      // As undici: TCP keep-alive probes after a minute of silence find a peer that vanished mid-reply.
      keepAlive: true,
      keepAliveInitialDelay: 60_000,
      onread: { buffer: READ_BUFFER, callback: (n: number, buf: Uint8Array) => this.read(n, buf as Buffer) },
    });
    this.socket.on('connect', () => client.connected(this));
    this.socket.on('error', (err: NodeJS.ErrnoException) => client.lost(this, err.code ?? 'ECONNRESET', err.message));
    this.socket.on('close', () => client.lost(this, 'UND_ERR_SOCKET', 'closed'));
  }

  /** One read (net's onread); true keeps reading. */
  private read(n: number, buf: Buffer): boolean {
    const a = this.attempt;
    if (!a) {
      // Bytes on an idle connection (a late reply to an aborted request): the connection is of no more use.
      this.socket.destroy();
      return false;
    }
    this.now = performance.now();
    a.lastReadAtMs = this.now;
    const ok = this.reader.feed(buf, n, this);
    if (this.reader.done) this.client.completed(this, a, ok);
    else if (!ok) this.client.broken(this, a, this.reader.error ?? 'malformed response');
    return true;
  }

  head(status: number, headers: ReadonlyMap<string, string>): void {
    const a = this.attempt as Attempt;
    a.rec.head(this.now, status, (name) => headers.get(name));
    this.client.rule.repliedOnConnection(a.reused);
    this.replies++;
  }

  body(buf: Buffer, start: number, end: number): void {
    (this.attempt as Attempt).rec.data(this.now, buf, start, end);
  }

  complete(): void {
    (this.attempt as Attempt).rec.end(this.now);
  }
}
