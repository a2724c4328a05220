import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimServer, type SimServer } from '../../src/sim/server/index.js';
import { runCli } from '../helpers/cli.js';
import { startFixedDelayServer, type FixedDelayServer } from '../helpers/openai-server.js';

/** A pass-through proxy that logs each request's path, in arrival order (to see when /tokenize is called). */
async function startLoggingProxy(upstream: string): Promise<{ url: string; paths: string[]; close(): Promise<void> }> {
  const paths: string[] = [];
  const target = new URL(upstream);
  const server: Server = createServer((req, res) => {
    paths.push(`${req.method} ${req.url}`);
    const up = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, paths, close: () => new Promise((r) => server.close(() => r())) };
}

describe('the target and model are checked before any request', () => {
  let tmp: string;
  let server: FixedDelayServer;
  let sim: SimServer;
  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'inferbench-target-'));
    server = await startFixedDelayServer({ ttftMs: 1, itlMs: 1, model: 'served-model' });
    sim = await startSimServer({ engine: 'vllm', model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1, seed: 3, modelTimeScale: 0.05 });
  });
  afterAll(async () => {
    await server.close();
    await sim.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  for (const api of [[], ['--api', 'openai-chat']]) {
    it(`--model the server does not serve${api.length ? ' (--api given)' : ''}: one line listing what it serves, exit 2, no request sent`, async () => {
      const before = server.requests;
      const res = await runCli(['run', '--target', server.url, ...api, '--model', 'other-model', '--max-requests', '2', '--out', join(tmp, `model${api.length}`), '--no-progress']);
      expect(res.code).toBe(2);
      const errors = res.stderr.split('\n').filter((l) => l.startsWith('error:'));
      expect(errors).toEqual([expect.stringMatching(/--model other-model: the server at http:\/\/127\.0\.0\.1:\d+ serves served-model/)]);
      expect(server.requests).toBe(before);
    });
  }

  it('a served --model runs', async () => {
    const res = await runCli(['run', '--target', server.url, '--model', 'served-model', '--profile', 'synchronous', '--max-requests', '2', '--out', join(tmp, 'ok'), '--no-progress']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
  });

  it('--target ending in /v1 is accepted: detection and requests work, and it says which URL it used', async () => {
    const out = join(tmp, 'v1');
    const res = await runCli(['run', '--target', `${sim.url}/v1`, '--profile', 'synchronous', '--max-requests', '3', '--output-tokens', '8', '--out', out, '--no-progress']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`note: --target ends in /v1: using ${sim.url}`);
    expect(res.stdout).toMatch(/detected: vllm /);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { stages: Array<{ requests: { ok: number } }> };
    expect(summary.stages[0]?.requests.ok).toBe(3);
  });

  it('a server with /tokenize gives exact prompt lengths by default, said in one line', async () => {
    const res = await runCli(['run', '--target', sim.url, '--profile', 'synchronous', '--max-requests', '4', '--output-tokens', '8', '--out', join(tmp, 'exact'), '--no-progress']);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/prompt lengths: exact, calibrated against the server's \/tokenize before the first row \(\d+ requests, \d+ ms\)/);
    expect(res.stdout).toMatch(/all 4 server-counted prompts had exactly the length the client built/);
    expect(res.stdout).not.toMatch(/approximate tokenizer/);
  });

  it('--tokenizer approx opts out', async () => {
    const res = await runCli(['run', '--target', sim.url, '--tokenizer', 'approx', '--profile', 'synchronous', '--max-requests', '2', '--output-tokens', '8', '--out', join(tmp, 'approx'), '--no-progress']);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/note: prompt lengths use an approximate tokenizer \(o200k_base\)/);
    expect(res.stdout).not.toMatch(/calibrated against the server's \/tokenize/);
  });

  it('a server without /tokenize keeps the approximate default', async () => {
    const res = await runCli(['run', '--target', server.url, '--profile', 'synchronous', '--max-requests', '2', '--out', join(tmp, 'no-tokenize'), '--no-progress']);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/note: prompt lengths use an approximate tokenizer/);
  });

  it('prompts are sized through /tokenize before the first row: no /tokenize request while requests are sent', async () => {
    const proxy = await startLoggingProxy(sim.url);
    try {
      const res = await runCli(['run', '--target', proxy.url, '--profile', 'constant', '--rate', '20,40', '--max-requests', '30', '--output-tokens', '8', '--out', join(tmp, 'proxy'), '--no-progress']);
      expect(res.code).toBe(0);
      const calibration = Number(/calibrated against the server's \/tokenize before the first row \((\d+) requests/.exec(res.stdout)?.[1]);
      const firstSend = proxy.paths.findIndex((p) => p.startsWith('POST /v1/completions'));
      expect(firstSend).toBeGreaterThan(0);
      const tokenize = proxy.paths.map((p, i) => (p === 'POST /tokenize' ? i : -1)).filter((i) => i >= 0);
      expect(tokenize.length).toBe(calibration);
      expect(Math.max(...tokenize)).toBeLessThan(firstSend);
      // Two rows of 30 measured requests (rows may send a few more while they ramp up).
      expect(proxy.paths.filter((p) => p.startsWith('POST /v1/completions')).length).toBeGreaterThanOrEqual(60);
    } finally {
      await proxy.close();
    }
  });

  it('the default run against its own simulator builds exact prompts', async () => {
    const res = await runCli(['run', '--profile', 'synchronous', '--max-requests', '3', '--output-tokens', '8', '--out', join(tmp, 'embedded'), '--no-progress']);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/target: built-in simulator/);
    expect(res.stdout).toMatch(/prompt lengths: exact, calibrated against the server's \/tokenize/);
    expect(res.stdout).toMatch(/all 3 server-counted prompts had exactly the length the client built/);
    expect(res.stdout).not.toMatch(/matched the server's count exactly/);
  });
});
