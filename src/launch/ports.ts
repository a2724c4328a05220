import { createServer, connect } from 'node:net';

/** A TCP port nothing listens on right now (the kernel's pick for port 0), on `host` (default 127.0.0.1). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * True when nothing accepts connections on host:port. A connect attempt, not a bind: a server that listens on
 * 0.0.0.0 or on another loopback address would let a bind to 127.0.0.1 succeed while it still answers there.
 */
export function portIsFree(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    const done = (free: boolean): void => {
      socket.destroy();
      resolve(free);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(false));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code === 'ECONNREFUSED'));
  });
}

/** Waits up to `withinMs` for the port to be free (a stopped server's socket can take a moment to close). */
export async function waitPortFree(port: number, host: string, withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  for (;;) {
    if (await portIsFree(port, host)) return true;
    if (Date.now() >= until) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}
