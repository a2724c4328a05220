import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliInProcess } from '../helpers/cli-in-process-capgate.js';
import { rawTcpServer } from '../helpers/raw-tcp-server.js';

const tmp = mkdtempSync(join(tmpdir(), 'inferbench-failure-texts-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** An HTTP server answering every request (GET and POST) with `status` and a small JSON body. */
async function statusServer(status: number): Promise<{ url: string; close: () => Promise<void> }> {
  const srv: HttpServer = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: status === 501 ? `Unsupported method ('${req.method}')` : 'internal server error' }));
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => (srv.closeAllConnections(), srv.close(() => r()))) };
}

/** A TCP server that accepts each connection, reads what comes, and closes it without a reply. */
const closingServer = (): ReturnType<typeof rawTcpServer> => rawTcpServer((s) => s.once('data', () => s.destroy()));

// The commands run in this process (helpers/cli-in-process-capgate.ts: the CLI's own main, its exit codes and
// messages): what is tested is what they print and exit with. The servers fail every request within milliseconds,
// so a run stops on its 20th failure in a row: at 16 req/s that comes after ~1.3 s (at 4 req/s it took 5 s).
const common = ['--rate', '16', '--max-seconds', '2', '--output-tokens', '4', '--prompt-tokens', '16', '--tokenizer', 'approx', '--no-progress'];

describe('issue 36 item 10: failure messages that point the right way', () => {
  it('a server answering every probe with HTTP 500 (no --api): says every probe got HTTP 500, not "could not identify"', async () => {
    const server = await statusServer(500);
    try {
      const r = await cliInProcess(['run', '--target', server.url, '--out', join(tmp, 's500'), ...common]);
      expect(r.code).toBe(2);
      expect(r.stderr).not.toMatch(/could not identify/);
      expect(r.stderr).toMatch(new RegExp(`^error: every probe of ${server.url} got HTTP 500 \\(GET /, /v2, .*\\): the server is up but failing every request \\(check the server's log, or name its API with --api to skip detection\\)$`, 'm'));
    } finally {
      await server.close();
    }
  });

  it('a server that accepts and closes: "connected, but the server closed the connection without a reply", no undici code', async () => {
    const server = await closingServer();
    try {
      const detect = await cliInProcess(['run', '--target', server.url, '--out', join(tmp, 'close-a'), ...common]);
      expect(detect.code).toBe(2);
      expect(detect.stderr).toMatch(`error: connected to ${server.url}, but the server closed the connection without a reply`);
      expect(detect.stderr).not.toMatch(/cannot connect|start the server|UND_ERR/);
      // With --api and --model the requests themselves meet the close.
      const run = await cliInProcess(['run', '--target', server.url, '--api', 'openai-chat', '--model', 'x', '--out', join(tmp, 'close-b'), ...common]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/the server closed the connection without a reply/);
      expect(`${run.stdout}${run.stderr}`).not.toMatch(/UND_ERR/);
    } finally {
      await server.close();
    }
  });

  it('HTTP 501 to every POST (a static file server): hints that this is not an inference server, and the counts agree with the table', async () => {
    const server = await statusServer(501);
    try {
      const r = await cliInProcess(['run', '--target', server.url, '--api', 'openai-chat', '--model', 'x', '--out', join(tmp, 's501'), ...common]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/the server is refusing every request — HTTP 501 to a POST: this does not look like an inference server \(check --target's port\)/);
      // "N failures in a row (M measured, K in the ramp-up)": the measured part is what the table's ok/sent shows.
      const streak = /stopped after (\d+) failures in a row(?: \((\d+) measured, (\d+) in the ramp-up\))?/.exec(r.stderr);
      expect(streak).not.toBeNull();
      const measured = streak?.[2] !== undefined ? Number(streak[2]) : Number(streak?.[1]);
      const row = /\|\s+0\/(\d+)\s+\|\s+(\d+)\/(\d+) \(100%\)/.exec(r.stdout);
      expect(row, r.stdout).not.toBeNull();
      // The streak is the last run of fast failures: the table's measured count holds at least its measured part.
      expect(Number(row?.[1])).toBeGreaterThanOrEqual(measured);
      if (streak?.[2] === undefined) expect(Number(row?.[1])).toBeGreaterThanOrEqual(Number(streak?.[1]));
    } finally {
      await server.close();
    }
  });
});
