import { performance } from 'node:perf_hooks';
import type { ErrorCode } from '../core/errors.js';
import type { HttpRequestPlan } from '../dialects/types.js';
import { ReuseRule } from './connection-reuse.js';
import type { Timeouts } from './exchange.js';
import type { ExchangeRecorder } from './exchange-recorder.js';
import { Connection, type Attempt, type ConnectionOwner } from './h1-connection.js';
import type { HttpClient } from './undici-client.js';

/** Idle connections are closed after this long, or the server's `Keep-Alive: timeout` less 2 s (as undici). */
const KEEP_ALIVE_MS = 30_000;
const KEEP_ALIVE_MARGIN_MS = 2_000;
const BAD_HEADER_CHARS = /[\r\n\0]/;

/**
 * A small HTTP/1.1 client for plain http: origins, written for the per-token hot path (no undici
 * Readable machinery, no per-chunk allocation or timer). One request per connection at a time, at most
 * `connections` connections, kept alive and reused most-recent first. Timeouts are checked by one sweep
 * timer (a tenth of the shortest timeout, 5 ms to 250 ms), not re-armed per chunk.
 */
export class H1Client implements HttpClient, ConnectionOwner {
  readonly rule = new ReuseRule();
  private readonly host: string;
  private readonly port: number;
  private readonly hostHeader: string;
  private readonly all = new Set<Connection>();
  private readonly idle: Connection[] = [];
  private readonly waiting: Attempt[] = [];
  private readonly active = new Set<Attempt>();
  private sweeper: NodeJS.Timeout | undefined;
  private readonly sweepMs: number;

  constructor(
    origin: string,
    private readonly pathPrefix: string,
    private readonly maxConnections: number,
    private readonly timeouts: Timeouts,
  ) {
    const url = new URL(origin);
    this.host = url.hostname.replace(/^\[|\]$/g, '');
    this.port = Number(url.port || 80);
    this.hostHeader = url.host;
    const shortest = Math.min(timeouts.connectMs, timeouts.firstByteMs, timeouts.idleMs, timeouts.totalMs);
    this.sweepMs = Math.min(250, Math.max(5, shortest / 10));
  }

  get reusesConnections(): boolean {
    return !this.rule.closesAfterReply;
  }

  send(rec: ExchangeRecorder, plan: HttpRequestPlan, headers: Record<string, string>, signal?: AbortSignal): void {
    let head = `${plan.method} ${this.pathPrefix}${plan.path} HTTP/1.1\r\nhost: ${this.hostHeader}\r\n`;
    for (const name in headers) {
      const value = headers[name] as string;
      if (BAD_HEADER_CHARS.test(value) || BAD_HEADER_CHARS.test(name)) {
        rec.fail('E_CONFIG', `request header ${JSON.stringify(name)} holds a line break or NUL`);
        return rec.finish();
      }
      head += `${name}: ${value}\r\n`;
    }
    if (plan.method !== 'GET' || plan.body !== '') head += `content-length: ${plan.contentLength ?? Buffer.byteLength(plan.body)}\r\n`;
    const a: Attempt = { rec, head, body: plan.body, signal, retries: 0, conn: undefined, reused: false, writtenAtMs: NaN, firstWrittenAtMs: NaN, lastReadAtMs: NaN };
    rec.ex.dispatchedAtMs = performance.now();
    this.active.add(a);
    if (!this.sweeper) {
      this.sweeper = setInterval(() => this.sweep(), this.sweepMs);
      this.sweeper.unref();
    }
    this.assign(a);
  }

  abortAll(reason: string): void {
    // The queue first, so that no aborted request is handed a connection on the way.
    for (const a of [...this.waiting]) this.end(a, 'E_ABORTED', reason);
    for (const a of [...this.active]) this.end(a, 'E_ABORTED', reason);
  }

  async close(): Promise<void> {
    this.abortAll('target closed');
    for (const c of [...this.all]) c.socket.destroy();
    this.idle.length = 0;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** A connection for the attempt: an idle one, a new one, or a place in the queue. */
  private assign(a: Attempt): void {
    const oneShot = this.rule.closesAfterReply;
    const now = performance.now();
    while (this.idle.length > 0) {
      const c = this.idle.pop() as Connection;
      if (!oneShot && now < c.expiresAtMs && !c.socket.destroyed) return this.write(c, a);
      this.drop(c);
    }
    if (this.all.size < this.maxConnections) {
      const c = new Connection(this.host, this.port, this);
      this.all.add(c);
      c.attempt = a;
      a.conn = c;
      return;
    }
    this.waiting.push(a);
  }

  private write(c: Connection, a: Attempt): void {
    c.attempt = a;
    c.reader.reset();
    a.conn = c;
    a.reused = c.replies > 0;
    a.writtenAtMs = performance.now();
    if (Number.isNaN(a.firstWrittenAtMs)) a.firstWrittenAtMs = a.writtenAtMs;
    a.lastReadAtMs = NaN;
    // A retried request is timed from its retry's send: the server never saw the first attempt.
    a.rec.started(a.writtenAtMs);
    c.socket.ref();
    c.socket.write(`${a.head}connection: ${this.rule.closesAfterReply ? 'close' : 'keep-alive'}\r\n\r\n${a.body}`);
  }

  /** A new connection is open: write the attempt it was made for. */
  connected(c: Connection): void {
    c.connected = true;
    const a = c.attempt;
    if (a && this.active.has(a)) this.write(c, a);
    else this.release(c);
  }

  /** The response ended: the attempt is done, the connection goes back or is closed. */
  completed(c: Connection, a: Attempt, clean: boolean): void {
    c.attempt = undefined;
    this.finishAttempt(a);
    // Not clean: bytes followed the end of the response, so the connection's state is unknown.
    if (clean && c.reader.keepAlive && !this.rule.closesAfterReply) {
      const hint = c.reader.keepAliveHintMs;
      const life = hint === undefined ? KEEP_ALIVE_MS : Math.min(KEEP_ALIVE_MS, hint - KEEP_ALIVE_MARGIN_MS);
      if (life > 0) {
        c.expiresAtMs = performance.now() + life;
        return this.release(c);
      }
    }
    this.drop(c);
    this.pump();
  }

  /** The response could not be read. */
  broken(c: Connection, a: Attempt, why: string): void {
    this.end(a, 'E_RESET', `malformed HTTP response: ${why}`);
    this.drop(c);
  }

  /** The connection closed or failed (from its 'error' or 'close' event). */
  lost(c: Connection, code: string, message: string): void {
    if (!this.all.has(c)) return;
    this.all.delete(c);
    const i = this.idle.indexOf(c);
    if (i !== -1) this.idle.splice(i, 1);
    const a = c.attempt;
    if (a && this.active.has(a)) {
      c.now = performance.now();
      const ended = c.reader.closeEnds(c);
      c.attempt = undefined;
      if (ended) this.finishAttempt(a);
      else if (!c.connected) this.end(a, ...connectError(code, message));
      else if (!a.signal?.aborted && this.rule.shouldRetry(a.reused, { code }, a.rec.replyStarted || c.reader.replyStarted, a.retries)) {
        // The server closed a reused connection before reading this request (see ReuseRule).
        a.retries++;
        a.rec.ex.retries = a.retries;
        a.conn = undefined;
        this.assign(a);
      } else this.end(a, 'E_RESET', closedMessage(a.rec.replyStarted || c.reader.replyStarted, code));
    }
    c.attempt = undefined;
    c.socket.destroy();
    this.pump();
  }

  private release(c: Connection): void {
    const next = this.waiting.shift();
    if (next) return this.rule.closesAfterReply ? (this.drop(c), this.assign(next)) : this.write(c, next);
    // An idle connection does not keep the process alive (as undici's).
    c.socket.unref();
    this.idle.push(c);
  }

  /** A slot may have freed: start the next waiting attempt. */
  private pump(): void {
    while (this.waiting.length > 0 && this.all.size < this.maxConnections) this.assign(this.waiting.shift() as Attempt);
  }

  private drop(c: Connection): void {
    this.all.delete(c);
    c.attempt = undefined;
    c.socket.destroy();
  }

  /** Fail the attempt with this error and let go of its connection. */
  private end(a: Attempt, code: ErrorCode, message: string): void {
    a.rec.fail(code, message);
    const c = a.conn;
    if (c && c.attempt === a) this.drop(c);
    const w = this.waiting.indexOf(a);
    if (w !== -1) this.waiting.splice(w, 1);
    this.finishAttempt(a);
    this.pump();
  }

  private finishAttempt(a: Attempt): void {
    this.active.delete(a);
    a.conn = undefined;
    a.rec.finish();
    if (this.active.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** Timeouts, checked lazily: each is late by at most one sweep interval. */
  private sweep(): void {
    const now = performance.now();
    const t = this.timeouts;
    for (const a of [...this.active]) {
      const c = a.conn;
      if (now - a.firstWrittenAtMs > t.totalMs) this.end(a, 'E_TIMEOUT_TOTAL', `request exceeded ${t.totalMs} ms`);
      else if (c && !c.connected && now - c.openedAtMs > t.connectMs) this.end(a, 'E_CONNECT_TIMEOUT', 'connect timed out');
      else if (c?.connected && a.rec.ex.headersAtMs === undefined && now - a.writtenAtMs > t.firstByteMs) {
        this.end(a, 'E_TIMEOUT_FIRST_BYTE', 'no response headers within the first-byte timeout');
      } else if (a.rec.ex.headersAtMs !== undefined && now - (Number.isNaN(a.lastReadAtMs) ? a.writtenAtMs : a.lastReadAtMs) > t.idleMs) {
        this.end(a, 'E_TIMEOUT_IDLE', 'no data within the idle timeout');
      }
    }
  }
}

function connectError(code: string, message: string): [ErrorCode, string] {
  switch (code) {
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EAI_AGAIN':
    case 'EADDRNOTAVAIL':
      return ['E_CONNECT', `${code}: ${message}`];
    case 'ETIMEDOUT':
      return ['E_CONNECT_TIMEOUT', 'connect timed out'];
    default:
      return ['E_CONNECT', `${code}: ${message}`];
  }
}

/** Why a request ended on a closed connection, in words: UND_ERR_SOCKET (a plain close) is our own name, not the user's. */
function closedMessage(replyStarted: boolean, code: string): string {
  const what = replyStarted ? 'the server closed the connection in the middle of its reply' : 'the server closed the connection without a reply';
  return code === 'UND_ERR_SOCKET' ? what : `${what} (${code})`;
}
