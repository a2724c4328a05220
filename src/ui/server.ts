import { listMatrices, matrixView } from './matrix-views.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InferbenchError, isUserError } from '../core/errors.js';
import type { StoredRun } from '../store/run-store.js';
import { assetFor } from './assets.js';
import type { ApiError, RunPending, RunRow } from './client/api-types.js';
import type { FeedBatch } from './feed-types.js';
import { LiveHub } from './live-hub.js';
import { newToken, removeMarker, writeMarker, type DashboardMarker } from './marker.js';
import { RunCatalog, type CatalogEntry } from './run-catalog.js';
import { compareView, requestsView, runView, telemetryView } from './run-views.js';

export interface Dashboard {
  url: string;
  marker: DashboardMarker;
  hub: LiveHub;
  close(): Promise<void>;
}

/** Vega compiles expressions with Function(): 'unsafe-eval' is needed; inline scripts are not allowed. */
const CSP = "default-src 'none'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const MAX_POST = 256 * 1024;

function send(res: ServerResponse, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    ...extra,
  });
  res.end(body);
}

const json = (res: ServerResponse, status: number, value: unknown): void => send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => {
      size += d.length;
      if (size > MAX_POST) {
        reject(new Error('body too large'));
        req.destroy();
      } else parts.push(d);
    });
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * `inferbench ui`: the dashboard's HTTP server on 127.0.0.1. Pages and assets, a JSON API over the run store, the
 * live feed runs post to, and one server-sent-event stream per open page.
 */
export async function startDashboard(opts: { resultsDir: string; port: number }): Promise<Dashboard> {
  const catalog = new RunCatalog(opts.resultsDir);
  const hub = new LiveHub();
  const token = newToken();
  let port = opts.port;

  const rows = (): RunRow[] => {
    const listed = catalog.list().map((e) => ({ ...e.row, ...(hub.byName(e.name) ? { live: hub.byName(e.name)?.status } : {}) }));
    const names = new Set(listed.map((r) => r.name));
    // A live run before its first row has no summary.json yet: listed from its feed.
    const early = hub.list().filter((l) => !names.has(l.name)).map((l): RunRow => ({
      id: l.id, name: l.name, createdAt: l.startedAt.replace('T', ' ').slice(0, 16), layout: '', profile: l.profile, model: l.model, engine: l.engine, gpu: '', quant: '',
      rows: 0, failedRows: 0, rowsText: '', label: '', tool: 'inferbench', predicted: false, series: l.name, live: l.status,
    }));
    return [...listed, ...early];
  };
  const entry = (id: string): CatalogEntry & { run: StoredRun } => catalog.get(id);

  async function api(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname;
    let m: RegExpExecArray | null;
    if (req.method === 'POST' && path === '/api/live') {
      // Only a run that read the marker file knows the token; a web page cannot send this header cross-origin.
      if (req.headers['x-inferbench-token'] !== token) return json(res, 403, { error: 'bad token' });
      const batch = JSON.parse(await readBody(req)) as FeedBatch;
      if (typeof batch.name !== 'string' || typeof batch.dir !== 'string') return json(res, 400, { error: 'not a feed batch' });
      await hub.accept(batch);
      res.writeHead(204).end();
      return;
    }
    if (req.method !== 'GET') return json(res, 405, { error: 'method not allowed' });
    if (path === '/api/events') return hub.addClient(res);
    if (path === '/api/runs') return json(res, 200, { results: catalog.root, runs: rows() });
    if ((m = /^\/api\/runs\/([0-9a-f]{8})$/.exec(path))) {
      const id = m[1] as string;
      const early = hub.snapshot(id);
      if (early && !catalog.list().some((e) => e.id === id)) return json(res, 200, { pending: true, live: early.run } satisfies RunPending);
      return json(res, 200, runView(entry(id)));
    }
    if ((m = /^\/api\/runs\/([0-9a-f]{8})\/requests$/.exec(path))) return json(res, 200, await requestsView(entry(m[1] as string)));
    if ((m = /^\/api\/runs\/([0-9a-f]{8})\/telemetry$/.exec(path))) return json(res, 200, await telemetryView(entry(m[1] as string)));
    if (path === '/api/compare') {
      const ids = (url.searchParams.get('ids') ?? '').split(',').filter((s) => /^[0-9a-f]{8}$/.test(s));
      return json(res, 200, compareView(ids.map(entry), url.searchParams.get('allow') === '1'));
    }
    if (path === '/api/matrices') return json(res, 200, listMatrices(catalog.root));
    if ((m = /^\/api\/matrices\/([^/]+)$/.exec(path))) return json(res, 200, matrixView(catalog.root, decodeURIComponent(m[1] as string)));
    if (path === '/api/live') return json(res, 200, hub.list());
    // null, not a 404, for a run that is not live: pages ask for every run they open.
    if ((m = /^\/api\/live\/([0-9a-f]{8})$/.exec(path))) return json(res, 200, hub.snapshot(m[1] as string) ?? null);
    json(res, 404, { error: `no API at ${path}` } satisfies ApiError);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Pages from other sites reach 127.0.0.1 only under another host name (DNS rebinding): refused.
    const host = req.headers.host ?? '';
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}` && host !== `[::1]:${port}`) {
      return send(res, 403, 'text/plain; charset=utf-8', 'forbidden host\n');
    }
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
    if (url.pathname.startsWith('/api/')) {
      try {
        await api(req, res, url);
      } catch (err) {
        if (res.headersSent) return void res.end();
        if (isUserError(err)) {
          const e = err as InferbenchError & { canAllow?: boolean };
          const status = /^no (run with id|matrix named)/.test(e.message) ? 404 : 400;
          return json(res, status, { error: e.message, ...(e.hint ? { hint: e.hint } : {}), ...(e.canAllow ? { canAllow: true } : {}) } satisfies ApiError);
        }
        const msg = err instanceof SyntaxError ? `bad JSON: ${err.message}` : (err as Error).message;
        process.stderr.write(`dashboard: ${req.method} ${url.pathname}: ${msg}\n`);
        return json(res, err instanceof SyntaxError ? 400 : 500, { error: msg } satisfies ApiError);
      }
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
    if (url.pathname === '/favicon.ico') return void res.writeHead(204).end();
    const asset = await assetFor(url.pathname);
    if (!asset) return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
    send(res, 200, asset.type, asset.body, { 'content-security-policy': CSP, 'x-frame-options': 'DENY' });
  }

  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}/`;
  const marker: DashboardMarker = { pid: process.pid, url, token, results: catalog.root, startedAt: new Date().toISOString() };
  writeMarker(catalog.root, marker);

  // Tell open pages when a run appears or rewrites its summary without feeding us (an import, a copy, a predict).
  let signature = catalog.signature();
  let ticks = 0;
  const watch = setInterval(() => {
    if (++ticks % 8 === 0) hub.ping();
    if (hub.clientCount === 0) return;
    const now = catalog.signature();
    if (now !== signature) {
      signature = now;
      hub.broadcast('runs', {});
    }
  }, 2000);
  watch.unref();

  return {
    url,
    marker,
    hub,
    async close() {
      clearInterval(watch);
      removeMarker(catalog.root, token);
      hub.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
