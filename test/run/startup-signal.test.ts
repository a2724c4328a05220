import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEntry, repoRoot } from '../helpers/cli.js';

/**
 * Issue 51 item 10: Ctrl-C while the run starts (the server's probes here) was acknowledged, then probing,
 * calibration, "running … profile", an empty table and "rows after the last one shown were not run" followed. It
 * must stop there: one line, exit 130, nothing written. About the process, so the CLI is spawned (one small run).
 */
describe('Ctrl-C while the run starts', () => {
  let tmp: string;
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'ib-startup-signal-'));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('during the server probes: one line, exit 130, no table, no run folder left', async () => {
    // A server that takes every request and answers none: the run is held in its first probe (GET /).
    const probes: IncomingMessage[] = [];
    let probed: () => void = () => undefined;
    const firstProbe = new Promise<void>((resolve) => (probed = resolve));
    const server = createServer((req) => {
      probes.push(req);
      probed();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const out = join(tmp, 'run');
    try {
      const args = ['run', '--target', url, '--profile', 'concurrent', '--concurrency', '2', '--max-requests', '10', '--out', out, '--no-progress'];
      const child = spawn(process.execPath, [...cliEntry, ...args], { cwd: repoRoot, env: { ...process.env, CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
      await firstProbe;
      child.kill('SIGINT');
      const code = await closed;
      expect(code, stderr).toBe(130);
      expect(stderr.trim().split('\n')).toEqual(['SIGINT: stopped while starting, before any request was sent']);
      // Before: probing went on, then "running concurrent profile", a table header with no rows, "rows … not run".
      expect(stdout).toBe('');
      expect(probes).toHaveLength(1);
      // --out named a new folder: the run made it, wrote nothing into it, and took it away.
      expect(existsSync(out)).toBe(false);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 60_000);
});
