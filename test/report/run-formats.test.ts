import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startFixedDelayServer, type FixedDelayServer } from '../helpers/openai-server.js';

const PNG_MAGIC = '89504e470d0a1a0a';

describe('run --format html,png writes the report into the run folder', () => {
  let server: FixedDelayServer;
  const root = mkdtempSync(join(tmpdir(), 'ib-run-formats-'));
  beforeAll(async () => {
    server = await startFixedDelayServer({ ttftMs: 20, itlMs: 5 });
  });
  afterAll(async () => {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('report.html and the charts beside summary.json, listed on the saved line; a few requests kept as text', async () => {
    const out = join(root, 'run');
    const res = await runCli([
      'run', '--target', server.url, '--profile', 'concurrent', '--concurrency', '1,2', '--max-requests', '6',
      '--prompt-tokens', '16', '--output-tokens', '8', '--format', 'table,json,html,png', '--out', out, '--no-progress',
    ]);
    expect(res.code, res.stderr).toBe(0);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('id="row-pick"');
    expect(readFileSync(join(out, 'ttft-vs-req-rate.png')).subarray(0, 8).toString('hex')).toBe(PNG_MAGIC);
    expect(existsSync(join(out, 'table.md'))).toBe(false); // md was not asked for
    expect(res.stdout).toMatch(/^saved: .*summary\.json, requests\.jsonl, .*ttft-vs-req-rate\.png.*report\.html$/m);
    const samples = JSON.parse(readFileSync(join(out, 'sample-requests.json'), 'utf8')) as { requests: { prompt: string; promptTokens: number; outputTokens: number }[] };
    expect(samples.requests).toHaveLength(3);
    expect(samples.requests[0]?.prompt.length).toBeGreaterThan(0);
    expect(samples.requests[0]?.outputTokens).toBe(8);
  });

  it('an unknown format is one line, exit 2, before any request', async () => {
    const res = await runCli(['run', '--target', server.url, '--format', 'table,pdf', '--no-progress', '--out', join(root, 'bad')]);
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(/--format.*pdf/);
    expect(existsSync(join(root, 'bad'))).toBe(false);
  });
});
