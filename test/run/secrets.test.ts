import { readdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const SECRET = 'sk-test-DO-NOT-LEAK-1234567890';

describe('API keys stay secret', () => {
  it('appear in no artifact, log or error message, even when the server echoes them', async () => {
    let sawKey = 0;
    const server = createServer((req, res) => {
      const auth = req.headers.authorization ?? '';
      if (auth === `Bearer ${SECRET}`) sawKey++;
      req.resume();
      req.on('end', () => {
        if (req.url === '/v1/models') {
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ data: [{ id: 'm', owned_by: 'x' }] }));
        }
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `key ${auth} is not allowed` } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const out = mkdtempSync(join(tmpdir(), 'inferbench-secret-'));
    try {
      for (const [args, env] of [
        [['--api-key', SECRET], {}],
        [[], { OPENAI_API_KEY: SECRET }],
      ] as const) {
        const dir = join(out, String(args.length));
        const res = await runCli(['run', '--target', url, '--max-requests', '2', '--out', dir, '--no-progress', '--format', 'table,md,json,csv', ...args], { env });
        expect(res.code).toBe(1);
        expect(res.stderr).toMatch(/<redacted>/);
        expect(res.stdout + res.stderr).not.toContain(SECRET);
        for (const f of readdirSync(dir)) expect(readFileSync(join(dir, f), 'utf8'), f).not.toContain(SECRET);
      }
      expect(sawKey).toBeGreaterThanOrEqual(4);
    } finally {
      server.closeAllConnections();
      server.close();
      rmSync(out, { recursive: true, force: true });
    }
  });
});
