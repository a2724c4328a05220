import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import { Pool, type Dispatcher } from 'undici';
import { InferbenchError, type ErrorCode } from '../core/errors.js';
import type { Dialect, FrameEvent, GenerationRequest, HttpRequestPlan } from '../dialects/types.js';
import { describeBodyStart } from '../core/short-error.js';
import { ConnectionReuse, watchWrite, type WrittenOn } from './connection-reuse.js';
import { createFramer } from './framing.js';
import { defaultTimeouts, type Exchange, type Timeouts } from './exchange.js';

export interface HttpTargetOptions {
  /** Base URL, e.g. http://127.0.0.1:8000 (a path prefix is kept). */
  baseUrl: string;
  /** Connections in the pool: at least the largest number of requests in flight. */
  connections: number;
  timeouts?: Partial<Timeouts>;
  /** Sent as `Authorization: Bearer …`; never logged. */
  apiKey?: string;
}

const MAX_ERROR_BODY = 64 * 1024;

/** One origin, one undici Pool; requests go through dispatch() with the v2 handler API (no fetch on the hot path). */
export class HttpTarget {
  readonly timeouts: Timeouts;
  private readonly pool: Pool;
  private readonly origin: string;
  private readonly pathPrefix: string;
  private readonly authHeader: string | undefined;
  private readonly apiKey: string | undefined;
  private readonly inFlight = new Set<Dispatcher.DispatchController>();
  private readonly reuse: ConnectionReuse;

  constructor(opts: HttpTargetOptions) {
    const url = new URL(opts.baseUrl);
    this.origin = url.origin;
    this.pathPrefix = url.pathname.replace(/\/+$/, '');
    this.timeouts = { ...defaultTimeouts, ...opts.timeouts };
    this.apiKey = opts.apiKey || undefined;
    this.authHeader = opts.apiKey ? `Bearer ${opts.apiKey}` : undefined;
    const makePool = (): Pool =>
      new Pool(this.origin, {
        connections: Math.max(1, opts.connections),
        pipelining: 1,
        allowH2: false,
        connect: { timeout: this.timeouts.connectMs },
        headersTimeout: this.timeouts.firstByteMs,
        bodyTimeout: this.timeouts.idleMs,
        keepAliveTimeout: 30_000,
      });
    this.pool = makePool();
    this.reuse = new ConnectionReuse(this.pool, makePool);
  }

  /** False once the server was found to close connections after each reply (each request then opens its own). */
  get reusesConnections(): boolean {
    return !this.reuse.closesAfterReply;
  }

  /** Send one request; resolves (never rejects) with everything observed. */
  send(plan: HttpRequestPlan, dialect: Dialect, req?: GenerationRequest, signal?: AbortSignal): Promise<Exchange> {
    return new Promise<Exchange>((resolve) => {
      const ex: Exchange = { sentAtMs: NaN, endAtMs: NaN, contentTimesMs: [], textParts: [], done: false };
      const parser = dialect.createParser(req);
      // StringDecoder keeps split UTF-8 sequences like TextDecoder's stream mode at a third of its cost per chunk.
      const decoder = new StringDecoder('utf8');
      let first = true;
      let now = 0;
      let ok = true;
      let errorBody = '';
      let retryAfterNote = '';
      let payloads = 0;
      let bodyHead = '';
      let allFramesCounted = true;
      let countedTokens = 0;
      let controller: Dispatcher.DispatchController | undefined;
      let settled = false;
      let totalTimer: NodeJS.Timeout | undefined;
      let attempt: WrittenOn = { reused: false };
      let replyStarted = false;
      let retries = 0;

      const fail = (code: ErrorCode, raw: string, httpStatus?: number): void => {
        // A server that echoes the credentials must not get them written into records and reports.
        const message = this.apiKey ? raw.split(this.apiKey).join('<redacted>') : raw;
        if (!ex.error) ex.error = httpStatus === undefined ? { code, message } : { code, message, httpStatus };
      };
      const onFrame = (event: FrameEvent | null): void => {
        if (!event) return;
        if (event.text !== undefined && event.text !== '' || (event.tokens ?? 0) > 0) {
          ex.contentTimesMs.push(now);
          if (event.text) ex.textParts.push(event.text);
          if (event.tokens === undefined) allFramesCounted = false;
          else countedTokens += event.tokens;
        }
        if (event.usage) ex.usage = { ...ex.usage, ...event.usage };
        if (event.finishReason) ex.finishReason = event.finishReason;
        if (event.error) {
          fail(event.error.code ?? (event.error.type === 'parse' ? 'E_STREAM_PARSE' : 'E_STREAM_ERROR'), event.error.message);
        }
        if (event.done) ex.done = true;
      };
      const framer = createFramer(plan.framing, (payload, field) => {
        payloads++;
        onFrame(parser.frame(payload, field));
      });

      const finish = (): void => {
        if (settled) return;
        settled = true;
        if (totalTimer) clearTimeout(totalTimer);
        if (controller) this.inFlight.delete(controller);
        ex.endAtMs = performance.now();
        if (Number.isNaN(ex.sentAtMs)) ex.sentAtMs = ex.endAtMs;
        if (ex.contentTimesMs.length > 0 && allFramesCounted) ex.frameTokens = countedTokens;
        resolve(ex);
      };
      // One listener per request would pile up on a shared signal; a stop goes through abortAll() instead.
      if (signal?.aborted) {
        fail('E_ABORTED', 'run stopped before the request was sent');
        return finish();
      }

      const headers: Record<string, string> = { ...plan.headers };
      if (this.authHeader) headers['authorization'] = this.authHeader;
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart: (ctl) => {
          controller = ctl;
          this.inFlight.add(ctl);
          attempt = watchWrite();
          // A retried request is timed from its retry's send: the server never saw the first attempt.
          ex.sentAtMs = performance.now();
          // The whole-request limit counts from the first attempt.
          totalTimer ??= setTimeout(
            () => controller?.abort(new InferbenchError('E_TIMEOUT_TOTAL', `request exceeded ${this.timeouts.totalMs} ms`)),
            this.timeouts.totalMs,
          );
        },
        onResponseStart: (_ctl, statusCode, headers) => {
          ex.headersAtMs = performance.now();
          replyStarted = true;
          this.reuse.replied(attempt);
          ex.httpStatus = statusCode;
          ok = statusCode >= 200 && statusCode < 300;
          // The server's id for this request, to join the record with server-side traces (the sim's truth).
          const rid = headers['x-sim-request-id'] ?? headers['x-request-id'];
          if (rid !== undefined) ex.serverRequestId = String(rid);
          // Failures are recorded, never retried behind the user's back; Retry-After goes into the message.
          const retryAfter = ok ? undefined : headers['retry-after'];
          if (retryAfter !== undefined) retryAfterNote = ` (Retry-After: ${String(retryAfter)})`;
        },
        onResponseData: (_ctl, chunk) => {
          now = performance.now();
          if (!ok) {
            if (errorBody.length < MAX_ERROR_BODY) errorBody += decoder.write(chunk);
            return;
          }
          let text = decoder.write(chunk);
          if (first && text !== '') {
            first = false;
            if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
          }
          if (bodyHead.length < 2048) bodyHead += text.slice(0, 2048);
          framer.push(text);
        },
        onResponseEnd: () => {
          now = performance.now();
          if (!ok) {
            const status = ex.httpStatus ?? 0;
            fail('E_HTTP_STATUS', `HTTP ${status}: ${dialect.errorMessage(status, errorBody + decoder.end())}${retryAfterNote}`, status);
            return finish();
          }
          const tail = decoder.end();
          if (tail) framer.push(tail);
          framer.end();
          onFrame(parser.end?.() ?? null);
          if (payloads === 0 && bodyHead.trim() !== '' && !ex.error) {
            fail('E_STREAM_PARSE', `the reply is not a ${plan.framing} ${plan.framing === 'json' ? 'body' : 'stream'}: ${describeBodyStart(bodyHead)}`);
          }
          if (!ex.done && !ex.error) {
            fail('E_STREAM_TRUNCATED', 'stream ended without its final event');
          }
          finish();
        },
        onResponseError: (_ctl, err) => {
          if (!settled && !signal?.aborted && this.reuse.shouldRetry(attempt, err, replyStarted, retries)) {
            // The server closed a reused connection before reading this request (see ConnectionReuse).
            if (controller) this.inFlight.delete(controller);
            controller = undefined;
            retries++;
            ex.retries = retries;
            return dispatch();
          }
          const [code, message] = classify(err);
          fail(code, message);
          finish();
        },
      };
      const dispatch = (): void => {
        const { dispatcher, reset } = this.reuse.route();
        ex.dispatchedAtMs ??= performance.now();
        try {
          dispatcher.dispatch(
            { origin: this.origin, path: this.pathPrefix + plan.path, method: plan.method, headers, body: plan.body, ...(reset ? { reset } : {}) },
            handler,
          );
        } catch (err) {
          const [code, message] = classify(err);
          fail(code, message);
          finish();
        }
      };
      dispatch();
    });
  }

  /** Abort every request in flight (their exchanges resolve with E_ABORTED and this reason). */
  abortAll(reason = 'run stopped'): void {
    for (const ctl of this.inFlight) ctl.abort(new InferbenchError('E_ABORTED', reason));
  }

  async close(): Promise<void> {
    this.abortAll();
    await Promise.all([this.pool.destroy(), this.reuse.close()]);
  }
}

function classify(err: unknown): [ErrorCode, string] {
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
