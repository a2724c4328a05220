import { InferbenchError, configError } from '../core/errors.js';
import { isObj, oneLine, str } from './_shared.js';
import { readSimHardware, type SimHardware } from './sim-hardware.js';

/** Control-plane GETs for detection (global fetch: not the hot path): short timeouts, capped bodies. */
export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

const MAX_BODY = 1 << 20;

export class Prober {
  readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  /** The run's own abort (Ctrl-C while starting): a probe in flight stops with it. */
  private readonly signal: AbortSignal | undefined;
  /** Every probe's path and status, in order: a server that fails them all is told apart from one detection cannot place. */
  readonly answered: Array<{ path: string; status: number }> = [];
  /** What the built-in simulator said it simulates (its x-sim-* headers, sim-hardware.ts), on any probe's reply. */
  simHardware: SimHardware | undefined;

  constructor(baseUrl: string, opts: { apiKey?: string; timeoutMs?: number; signal?: AbortSignal }) {
    this.base = normalizeBase(baseUrl);
    this.headers = { accept: 'application/json, text/plain;q=0.9' };
    if (opts.apiKey !== undefined && opts.apiKey !== '') this.headers['authorization'] = `Bearer ${opts.apiKey}`;
    this.timeoutMs = opts.timeoutMs ?? 3000;
    this.signal = opts.signal;
  }

  /** GET `path`. Connection failures throw; a probe that times out (after the first) is just a miss. */
  async get(path: string, first = false): Promise<Reply | undefined> {
    const url = this.base + path;
    let res: Response;
    try {
      const timeout = AbortSignal.timeout(this.timeoutMs);
      res = await fetch(url, { headers: this.headers, signal: this.signal ? AbortSignal.any([timeout, this.signal]) : timeout });
    } catch (err) {
      if (isTimeout(err) && !first) return undefined;
      if (this.base.startsWith('https:') && (await answersPlainHttp(this.base, this.timeoutMs))) throw plainHttpError(this.base);
      throw connectError(this.base, err, this.timeoutMs);
    }
    this.answered.push({ path, status: res.status });
    this.simHardware ??= readSimHardware(res.headers);
    const type = res.headers.get('content-type') ?? '';
    const text = type.includes('html') ? (await res.body?.cancel(), '') : await readCapped(res);
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  }
}

function normalizeBase(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw configError(`invalid server URL "${baseUrl}"`, 'use e.g. http://127.0.0.1:8000');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw configError(`invalid server URL "${baseUrl}": expected http:// or https://`, 'use e.g. http://127.0.0.1:8000');
  }
  // Users often paste the OpenAI base URL; the metadata probes live at the server root.
  return `${url.origin}${url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}`;
}

async function readCapped(res: Response): Promise<string> {
  if (res.body === null) return '';
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    text += decoder.decode(value, { stream: true });
    if (size > MAX_BODY) {
      await reader.cancel();
      break;
    }
  }
  return text + decoder.decode();
}

function isTimeout(err: unknown): boolean {
  return err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
}

/**
 * An https:// target whose TLS handshake failed (reset, "wrong version number", or silence): when the same
 * host and port answer plain HTTP, the scheme is the mistake, and the error says so.
 */
async function answersPlainHttp(base: string, timeoutMs: number): Promise<boolean> {
  const url = new URL(base);
  url.protocol = 'http:';
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(Math.min(timeoutMs, 2000)) });
    await res.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

function plainHttpError(base: string): InferbenchError {
  const http = base.replace(/^https:/, 'http:');
  return new InferbenchError('E_CONNECT', `${base} does not speak TLS: the server there answers plain HTTP`, { hint: `use --target ${http}` });
}

function connectError(base: string, err: unknown, timeoutMs: number): InferbenchError {
  if (isTimeout(err)) {
    return new InferbenchError('E_CONNECT_TIMEOUT', `no answer from ${base} within ${timeoutMs} ms: is the server up and reachable?`, {
      hint: 'check host, port and scheme',
      cause: err,
    });
  }
  const cause = err instanceof Error && isObj(err.cause) ? err.cause : {};
  const code = str(cause['code']) ?? (err instanceof Error ? err.message : String(err));
  // A server that accepted the connection and closed it unanswered is there: "start the server" would point the wrong way.
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_CLOSED') {
    return new InferbenchError('E_CONNECT', `connected to ${base}, but the server closed the connection without a reply`, {
      hint: 'is an HTTP server listening on that port? check --target and the server\'s log',
      cause: err,
    });
  }
  const what = code === 'ECONNREFUSED' ? 'connection refused' : code === 'ENOTFOUND' ? 'host not found' : oneLine(code, 80);
  return new InferbenchError('E_CONNECT', `cannot connect to ${base} (${what}): start the server or fix the URL (--target)`, {
    hint: 'check host, port and scheme',
    cause: err,
  });
}
