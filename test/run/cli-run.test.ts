import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process-rows.js';
import { readRunFolder } from '../helpers/run-folder.js';
import { startFixedDelayServer, type FixedDelayServer } from '../helpers/openai-server.js';


const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('inferbench run against an OpenAI-compatible server', () => {
  let server: FixedDelayServer;
  let tmp: string;
  beforeAll(async () => {
    server = await startFixedDelayServer({ ttftMs: 20, itlMs: 5, model: 'fixed-model' });
    tmp = mkdtempSync(join(tmpdir(), 'inferbench-cli-'));
  });
  afterAll(async () => {
    await server.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  // The two tests run side by side (neither asserts on timing; each has its own folder), the sweep through the CLI's
  // own main in this process (what it writes to process.stdout/stderr is captured, Node warnings included), with
  // half-second rows: nothing here depends on their length.
  it.concurrent('prints an 11-row sweep whose means recompute exactly from requests.jsonl', async () => {
    const out = join(tmp, 'sweep');
    const res = await mainInProcess([
      'run', '--target', server.url, '--profile', 'sweep', '--max-seconds', '0.5', '--output-tokens', '8',
      '--prompt-tokens', '64', '--max-concurrency', '16', '--out', out, '--no-progress',
    ]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/detected: openai-compatible/);
    const tableLines = res.stdout.split('\n').filter((l) => /^\|\s+(synchronous|asynchronous@|throughput)/.test(l));
    expect(tableLines).toHaveLength(11);
    expect(tableLines[0]).toMatch(/^\|\s+synchronous/);
    expect(tableLines[10]).toMatch(/^\|\s+throughput/);

    const { doc, records } = readRunFolder(out);
    expect(doc.stages).toHaveLength(11);
    for (const stage of doc.stages) {
      const ok = records.filter((r) => r.stage === stage.index && !r.warmup && r.status === 'ok');
      expect(ok.length).toBe(stage.requests.ok);
      expect(stage.metrics.ttftMs!.mean).toBeCloseTo(mean(ok.map((r) => r.ttftMs!)), 9);
      expect(stage.metrics.itlMs!.mean).toBeCloseTo(mean(ok.map((r) => r.itlMs!)), 9);
      expect(stage.metrics.e2eMs!.mean).toBeCloseTo(mean(ok.map((r) => r.e2eMs!)), 9);
      for (const r of ok) expect(r.outputTokens).toBe(8);
    }
    const table = readFileSync(join(out, 'table.md'), 'utf8');
    expect(table.replace(/ +/g, ' ')).toContain(
      '| Benchmark | Requests per Second | Request Latency | Time to First Token | Inter Token Latency | Output Token Throughput |',
    );
  });

  // The one run of this file in a process of its own, as a user starts the bin: exit code, stdout, an empty stderr.
  it.concurrent('prints the grid table, one row per input × output cell', async () => {
    const out = join(tmp, 'grid');
    const res = await runCli([
      'run', '--target', server.url, '--api', 'openai-completions', '--profile', 'grid', '--input-lens', '128,512',
      '--output-lens', '8,16', '--num-prompts', '20', '--out', out, '--no-progress',
    ]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const rows = res.stdout.split('\n').filter((l) => /^\|\s+(128|512)\s+\|/.test(l));
    expect(rows).toHaveLength(4);
    const { doc, records } = readRunFolder(out);
    expect(doc.layout).toBe('grid');
    // Each cell: a burst of 20 (throughput columns), then a one-at-a-time pass of 10 (latency columns).
    expect(doc.stages).toHaveLength(8);
    expect(records).toHaveLength(4 * (20 + 10));
    for (const stage of doc.stages) {
      const measured = records.filter((r) => r.stage === stage.index && r.status === 'ok' && !r.warmup);
      expect(measured).toHaveLength(stage.label.endsWith('latency') ? 10 : 20);
      expect(stage.metrics.latencyPerOutputTokenMs!.mean).toBeCloseTo(mean(measured.map((r) => r.latencyPerOutputTokenMs!)), 9);
    }
  });
});
