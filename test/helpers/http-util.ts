import type { IncomingMessage, ServerResponse } from 'node:http';

/** A JSON reply with its length (test servers). */
export function json(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The whole request body as text. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
  });
}

/** Timers a test server starts (`later`), all cancelled at once when it closes (`clearAll`). */
export function trackedTimers(): { later(ms: number, fn: () => void): void; clearAll(): void } {
  const timers = new Set<NodeJS.Timeout>();
  return {
    later(ms, fn) {
      const t = setTimeout(() => {
        timers.delete(t);
        fn();
      }, ms);
      timers.add(t);
    },
    clearAll() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}
