import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import type { Dispatcher, Pool } from 'undici';
import { InferbenchError, type ErrorCode } from '../core/errors.js';
import type { HttpRequestPlan } from '../dialects/types.js';
import { ConnectionReuse, watchWrite, type WrittenOn } from './connection-reuse.js';
import type { Timeouts } from './exchange.js';
import type { ExchangeRecorder } from './exchange-recorder.js';

/** What HttpTarget needs from an HTTP/1.1 client: start one exchange, stop them all, let go. */
export interface HttpClient {
  /** Send one request; the client feeds `rec` and ends with rec.finish() (never throws). */
  send(rec: ExchangeRecorder, plan: HttpRequestPlan, headers: Record<string, string>, signal?: AbortSignal): void;
  abortAll(reason: string): void;
  close(): Promise<void>;
  /** False once the server was found to close connections after each reply. */
  readonly reusesConnections: boolean;
}

/**
 * undici loads when the first https: client is made, not at start-up: plain http: never uses it, and loading it
 * cost every `inferbench run` ~0.2 s of CPU before its first argument was read.
 */
let undici: typeof import('undici') | undefined;
const loadUndici = (): typeof import('undici') => (undici ??= createRequire(import.meta.url)('undici') as typeof import('undici'));

/**
 * The undici client (one Pool; dispatch() with the v2 handler API). Used for https: origins; plain http:
 * goes through h1-client.ts, which costs less than half the CPU per streamed token.
 */
export class UndiciClient implements HttpClient {
  private readonly pool: Pool;
  private readonly inFlight = new Set<Dispatcher.DispatchController>();
  private readonly reuse: ConnectionReuse;

  constructor(
    private readonly origin: string,
    private readonly pathPrefix: string,
    connections: number,
    private readonly timeouts: Timeouts,
  ) {
    const { Pool: UndiciPool } = loadUndici();
    const makePool = (): Pool =>
      new UndiciPool(origin, {
        connections: Math.max(1, connections),
        pipelining: 1,
        allowH2: false,
        connect: { timeout: timeouts.connectMs },
        headersTimeout: timeouts.firstByteMs,
        bodyTimeout: timeouts.idleMs,
        keepAliveTimeout: 30_000,
      });
    this.pool = makePool();
    this.reuse = new ConnectionReuse(this.pool, makePool);
  }

  get reusesConnections(): boolean {
    return !this.reuse.closesAfterReply;
  }

  send(rec: ExchangeRecorder, plan: HttpRequestPlan, headers: Record<string, string>, signal?: AbortSignal): void {
    let controller: Dispatcher.DispatchController | undefined;
    let totalTimer: NodeJS.Timeout | undefined;
    let attempt: WrittenOn = { reused: false };
    let retries = 0;
    const finish = (): void => {
      if (totalTimer) clearTimeout(totalTimer);
      if (controller) this.inFlight.delete(controller);
      rec.finish();
    };
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: (ctl) => {
        controller = ctl;
        this.inFlight.add(ctl);
        attempt = watchWrite();
        // A retried request is timed from its retry's send: the server never saw the first attempt.
        rec.started(performance.now());
        // The whole-request limit counts from the first attempt.
        totalTimer ??= setTimeout(
          () => controller?.abort(new InferbenchError('E_TIMEOUT_TOTAL', `request exceeded ${this.timeouts.totalMs} ms`)),
          this.timeouts.totalMs,
        );
      },
      onResponseStart: (_ctl, statusCode, h) => {
        rec.head(performance.now(), statusCode, (name) => {
          const v = h[name];
          return v === undefined ? undefined : String(v);
        });
        this.reuse.replied(attempt);
      },
      onResponseData: (_ctl, chunk) => rec.data(performance.now(), chunk, 0, chunk.length),
      onResponseEnd: () => {
        rec.end(performance.now());
        finish();
      },
      onResponseError: (_ctl, err) => {
        if (!rec.settled && !signal?.aborted && this.reuse.shouldRetry(attempt.reused, err, rec.replyStarted, retries)) {
          // The server closed a reused connection before reading this request (see ConnectionReuse).
          if (controller) this.inFlight.delete(controller);
          controller = undefined;
          retries++;
          rec.ex.retries = retries;
          return dispatch();
        }
        const [code, message] = classifyUndiciError(err);
        rec.fail(code, message);
        finish();
      },
    };
    const dispatch = (): void => {
      const { dispatcher, reset } = this.reuse.route();
      rec.ex.dispatchedAtMs ??= performance.now();
      try {
        dispatcher.dispatch(
          { origin: this.origin, path: this.pathPrefix + plan.path, method: plan.method, headers, body: plan.body, ...(reset ? { reset } : {}) },
          handler,
        );
      } catch (err) {
        const [code, message] = classifyUndiciError(err);
        rec.fail(code, message);
        finish();
      }
    };
    dispatch();
  }

  abortAll(reason: string): void {
    for (const ctl of this.inFlight) ctl.abort(new InferbenchError('E_ABORTED', reason));
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.destroy(), this.reuse.close()]);
  }
}

export function classifyUndiciError(err: unknown): [ErrorCode, string] {
  if (err instanceof InferbenchError) return [err.code, err.message];
  const e = err as { code?: string; message?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code;
  const message = e.message ?? String(err);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return ['E_CONNECT_TIMEOUT', 'connect timed out'];
    case 'UND_ERR_HEADERS_TIMEOUT':
      return ['E_TIMEOUT_FIRST_BYTE', 'no response headers within the first-byte timeout'];
    case 'UND_ERR_BODY_TIMEOUT':
      return ['E_TIMEOUT_IDLE', 'no data within the idle timeout'];
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EHOSTUNREACH':
    case 'EAI_AGAIN':
      return ['E_CONNECT', `${code}: ${message}`];
    case 'UND_ERR_SOCKET':
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_CLOSED':
      return ['E_RESET', `connection closed by the server (${code})`];
    case 'UND_ERR_ABORTED':
      return ['E_ABORTED', 'request aborted'];
    default:
      return ['E_RESET', message];
  }
}
