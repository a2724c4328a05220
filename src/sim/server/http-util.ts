/** The sim server's plain HTTP helpers: route matching and bounded body reads. */
import type { IncomingMessage } from 'node:http';
import type { Route } from '../wire/types.js';

const MAX_BODY = 32 * 1024 * 1024;

export function matchRoute(routes: readonly Route[], method: string, path: string): { route: Route; params: string[] } | undefined {
  for (const route of routes) {
    if (route.method !== method && !(method === 'HEAD' && route.method === 'GET')) continue;
    if (typeof route.path === 'string') {
      if (route.path === path) return { route, params: [] };
    } else {
      const m = route.path.exec(path);
      if (m) return { route, params: m.slice(1).map((x) => decodeURIComponent(x ?? '')) };
    }
  }
  return undefined;
}

export function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => resolve(size > MAX_BODY ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(undefined));
  });
}
