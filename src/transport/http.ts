import type { Dialect, GenerationRequest, HttpRequestPlan } from '../dialects/types.js';
import { defaultTimeouts, type Exchange, type Timeouts } from './exchange.js';
import { ExchangeRecorder } from './exchange-recorder.js';
import { H1Client } from './h1-client.js';
import { UndiciClient, type HttpClient } from './undici-client.js';

export interface HttpTargetOptions {
  /** Base URL, e.g. http://127.0.0.1:8000 (a path prefix is kept). */
  baseUrl: string;
  /** Connections in the pool: at least the largest number of requests in flight. */
  connections: number;
  timeouts?: Partial<Timeouts>;
  /** Sent as `Authorization: Bearer …`; never logged. */
  apiKey?: string;
  /**
   * Which HTTP/1.1 client carries the requests: 'h1' (h1-client.ts, plain http: only) or 'undici'.
   * Default: h1 for http:, undici for https:.
   */
  client?: 'h1' | 'undici';
  /** A response header naming the replica that served each request (`--replica-header`; any case). */
  replicaHeader?: string;
}

/** One origin, one connection pool; the per-request observation is ExchangeRecorder's, whichever client sends. */
export class HttpTarget {
  readonly timeouts: Timeouts;
  private readonly client: HttpClient;
  private readonly authHeader: string | undefined;
  private readonly apiKey: string | undefined;
  private readonly replicaHeader: string | undefined;

  constructor(opts: HttpTargetOptions) {
    const url = new URL(opts.baseUrl);
    const pathPrefix = url.pathname.replace(/\/+$/, '');
    this.timeouts = { ...defaultTimeouts, ...opts.timeouts };
    this.apiKey = opts.apiKey || undefined;
    this.replicaHeader = opts.replicaHeader?.toLowerCase();
    this.authHeader = opts.apiKey ? `Bearer ${opts.apiKey}` : undefined;
    const h1 = (opts.client ?? (url.protocol === 'http:' ? 'h1' : 'undici')) === 'h1' && url.protocol === 'http:';
    this.client = h1
      ? new H1Client(url.origin, pathPrefix, Math.max(1, opts.connections), this.timeouts)
      : new UndiciClient(url.origin, pathPrefix, opts.connections, this.timeouts);
  }

  /** False once the server was found to close connections after each reply (each request then opens its own). */
  get reusesConnections(): boolean {
    return this.client.reusesConnections;
  }

  /** Send one request; resolves (never rejects) with everything observed. `route.onReply`: reply bytes arrived (ExchangeRecorder). */
  send(plan: HttpRequestPlan, dialect: Dialect, req?: GenerationRequest, signal?: AbortSignal, route?: { onReply?: () => void }): Promise<Exchange> {
    return new Promise<Exchange>((resolve) => {
      const rec = new ExchangeRecorder(plan, dialect, req, this.apiKey, resolve, this.replicaHeader, route?.onReply);
      // One listener per request would pile up on a shared signal; a stop goes through abortAll() instead.
      if (signal?.aborted) {
        rec.fail('E_ABORTED', 'run stopped before the request was sent');
        return rec.finish();
      }
      let headers = plan.headers;
      if (this.authHeader) headers = { ...headers, authorization: this.authHeader };
      this.client.send(rec, plan, headers, signal);
    });
  }

/** Abort every request in flight (their exchanges resolve with E_ABORTED and this reason). */
  abortAll(reason = 'run stopped'): void {
    this.client.abortAll(reason);
  }

  async close(): Promise<void> {
    this.abortAll();
    await this.client.close();
  }
}
