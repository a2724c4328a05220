import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEntry, repoRoot, runCli } from '../helpers/cli.js';
import { startFixedDelayServer, type FixedDelayServer } from '../helpers/openai-server.js';

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

function expectOneLineError(stderr: string, pattern: RegExp): void {
  const lines = stderr.split('\n').filter((l) => l.startsWith('error:'));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(stderr).not.toMatch(/\n\s+at /);
}

describe('bad input gives one line and the right exit code', () => {
  let tmp: string;
  const servers: FixedDelayServer[] = [];
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'inferbench-err-'));
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    rmSync(tmp, { recursive: true, force: true });
  });

  const usage: Array<[string, string[], RegExp]> = [
    ['unknown profile', ['--profile', 'nope'], /--profile "nope" is not known; choose one of: synchronous/],
    ['poisson without rates', ['--profile', 'poisson'], /needs --rate/],
    ['bad rate', ['--profile', 'constant', '--rate', '1,abc'], /--rate "abc" is not a number > 0/],
    ['bad URL', ['--target', 'localhost:8000'], /is not an http\(s\) URL/],
    ['bad JSON body', ['--extra-body', '{bad'], /--extra-body must be a JSON object/],
    ['several problems at once', ['--seed', '-1', '--max-seconds', '0'], /2 problems: --seed "-1" .*; --max-seconds "0"/],
    ['grid without lengths', ['--profile', 'grid'], /needs --input-lens and --output-lens/],
  ];
  for (const [name, args, pattern] of usage) {
    it(`${name}: exit 2`, async () => {
      const res = await runCli(['run', ...args]);
      expect(res.code).toBe(2);
      expectOneLineError(res.stderr, pattern);
    });
  }

  it('unknown flag: exit 2 without a stack trace', async () => {
    const res = await runCli(['run', '--no-such-flag']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/unknown option '--no-such-flag'/);
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });

  it('unreachable target: exit 2, says to start the server', async () => {
    const res = await runCli(['run', '--target', `http://127.0.0.1:${await closedPort()}`]);
    expect(res.code).toBe(2);
    expectOneLineError(res.stderr, /cannot connect to http:\/\/127\.0\.0\.1:\d+.*start the server/);
  });

  const replies: Array<[string, { status: number; body: string }, string[], RegExp]> = [
    ['401', { status: 401, body: '{"error":{"message":"Invalid API key"}}' }, [], /refused \(HTTP 401: Invalid API key\); pass the key with --api-key/],
    ['non-JSON 200', { status: 200, body: '<html><body>proxy login</body></html>' }, [], /not openai-chat responses .*an HTML page \("proxy login"\)/],
    ['400', { status: 400, body: '{"object":"error","message":"model x does not exist"}' }, [], /rejected \(HTTP 400: model x does not exist\)/],
  ];
  for (const [name, failWith, extra, pattern] of replies) {
    it(`server answers ${name}: the run stops after the first row with exit 1 and keeps what it measured`, async () => {
      const server = await startFixedDelayServer({ ttftMs: 1, itlMs: 1, failWith });
      servers.push(server);
      const out = join(tmp, `reply-${name.replace(/\W/g, '')}`);
      const res = await runCli(['run', '--target', server.url, '--max-requests', '3', '--out', out, '--no-progress', ...extra]);
      expect(res.code).toBe(1);
      expectOneLineError(res.stderr, pattern);
      expect(existsSync(join(out, 'summary.json'))).toBe(true);
      expect(readFileSync(join(out, 'requests.jsonl'), 'utf8').trim().split('\n')).toHaveLength(3);
      expect(res.stdout).toMatch(/all failed:/);
    });
  }

  it('404 path: names the endpoint and what to check', async () => {
    const server = await startFixedDelayServer({ ttftMs: 1, itlMs: 1 });
    servers.push(server);
    const res = await runCli(['run', '--target', `${server.url}/wrong`, '--api', 'openai-chat', '--model', 'm', '--max-requests', '2', '--out', join(tmp, 'p404'), '--no-progress']);
    expect(res.code).toBe(1);
    expectOneLineError(res.stderr, /no openai-chat endpoint at http:\/\/127\.0\.0\.1:\d+\/wrong \(HTTP 404/);
  });
});

describe('Ctrl-C', () => {
  it('keeps every finished record, prints the partial table and exits 130', async () => {
    const server = await startFixedDelayServer({ ttftMs: 5, itlMs: 5 });
    const out = mkdtempSync(join(tmpdir(), 'inferbench-int-'));
    try {
      const child = spawn(process.execPath, [...cliEntry, 'run', '--target', server.url, '--profile', 'constant', '--rate', '20', '--max-seconds', '60', '--output-tokens', '20', '--out', out, '--no-progress'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      await new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          if (existsSync(join(out, 'requests.jsonl')) && readFileSync(join(out, 'requests.jsonl'), 'utf8').split('\n').length > 10) {
            clearInterval(poll);
            resolve();
          }
        }, 100);
      });
      child.kill('SIGINT');
      const code = await new Promise<number | null>((r) => child.on('close', r));
      expect(code).toBe(130);
      expect(stderr).toMatch(/SIGINT: stopping/);
      const doc = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { interrupted: boolean; stages: Array<{ requests: { ok: number; incomplete: number; warmup: number } }> };
      expect(doc.interrupted).toBe(true);
      const lines = readFileSync(join(out, 'requests.jsonl'), 'utf8').trim().split('\n');
      const row = doc.stages[0]!;
      // Every record is on disk: the measured ones and the row's ramp-up (saved, left out of the figures).
      expect(lines.length).toBe(row.requests.ok + row.requests.incomplete + row.requests.warmup);
      expect(row.requests.ok).toBeGreaterThan(5);
      expect(stdout).toMatch(/asynchronous@20\.00 req\/sec/);
      expect(stdout).toMatch(/Interrupted/);
    } finally {
      await server.close();
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('a second Ctrl-C exits at once, with what finished already on disk', async () => {
    // Requests that take 10 s each: the first Ctrl-C starts a clean stop, the second must not wait for it.
    const server = await startFixedDelayServer({ ttftMs: 10_000, itlMs: 5 });
    const out = mkdtempSync(join(tmpdir(), 'inferbench-int2-'));
    try {
      const child = spawn(process.execPath, [...cliEntry, 'run', '--target', server.url, '--profile', 'constant', '--rate', '5', '--max-seconds', '60', '--out', out, '--no-progress'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      // Listen for the exit from the start: on a loaded host the first Ctrl-C can finish the run inside the 50 ms
      // before the second, and a 'close' listener attached after that would wait forever.
      const closed = new Promise<[number | null, NodeJS.Signals | null]>((r) => child.on('close', (c, s) => r([c, s])));
      await new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          // A child that exited before writing its manifest fails the assertions below instead of hanging here.
          if (existsSync(join(out, 'manifest.json')) || child.exitCode !== null || child.signalCode !== null) {
            clearInterval(poll);
            resolve();
          }
        }, 50);
      });
      await new Promise((r) => setTimeout(r, 500));
      const t0 = performance.now();
      child.kill('SIGINT');
      await new Promise((r) => setTimeout(r, 50));
      child.kill('SIGINT');
      const [code, signal] = await closed;
      // 130, or the second SIGINT itself when it lands while the process is already exiting (Node restores the default
      // action at teardown; the first Ctrl-C can finish the run within the 50 ms): a shell reads 130 either way.
      expect(code === 130 || (code === null && signal === 'SIGINT'), `exit code ${code}, signal ${signal}`).toBe(true);
      expect(performance.now() - t0).toBeLessThan(5000);
      expect(stderr).toMatch(/SIGINT: stopping/);
      expect(existsSync(join(out, 'requests.jsonl'))).toBe(true);
    } finally {
      await server.close();
      rmSync(out, { recursive: true, force: true });
    }
  });
});
