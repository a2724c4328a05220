/** Helpers for the sim server tests: real HTTP on 127.0.0.1, port 0. */
import { startSimServer, type SimServer, type SimServerOptions } from '../../src/sim/server/index.js';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
}

export async function call(server: SimServer, method: string, path: string, body?: unknown): Promise<Reply> {
  const r = await fetch(server.url + path, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: body === undefined ? undefined : { 'content-type': 'application/json' },
  });
  return { status: r.status, headers: r.headers, text: await r.text() };
}

export function start(engine: SimServerOptions['engine'], extra: Partial<SimServerOptions> = {}): Promise<SimServer> {
  return startSimServer({ engine, model: 'Llama-3.1-8B', gpu: 'A100-80GB', gpus: 1, seed: 7, modelTimeScale: 0.02, ...extra });
}

/** SSE payloads (`data:` with or without a space). */
export function sseData(text: string): string[] {
  return text
    .split('\n\n')
    .filter((e) => e.length > 0)
    .map((e) => {
      if (!e.startsWith('data:')) throw new Error(`not an SSE data event: ${JSON.stringify(e)}`);
      return e.slice(e.startsWith('data: ') ? 6 : 5);
    });
}

export function words(s: string): number {
  return s.split(' ').filter((w) => w.length > 0).length;
}

export const PROMETHEUS_LINE = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? -?[0-9.eE+-]+(?: [0-9]+)?$/;
