import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mainInProcess } from '../helpers/main-in-process-rows.js';
import { startFixedDelayServer, type FixedDelayServer } from '../helpers/openai-server.js';
import { readRunFolder } from '../helpers/run-folder.js';
import { startSlotServer } from '../helpers/slot-server.js';

/**
 * Issue 11 items 1–3 and 5: rows report the steady state their label promises, overload is flagged, rows say how many
 * samples they rest on, and a server that fails fast does not get a retry storm.
 */
describe('steady-state rows against real HTTP servers', () => {
  let tmp: string;
  let fixed: FixedDelayServer;
  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'ib-steady-'));
    // 0.05 + 39 × 0.02 ≈ 0.83 s per request: a large share of a 3-s row.
    fixed = await startFixedDelayServer({ ttftMs: 50, itlMs: 20, model: 'fixed-model' });
  });
  afterAll(async () => {
    await fixed.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('--rate 4 --max-seconds 3 reports 4 req/s, not the ~3.1 of first send → last completion', async () => {
    const out = join(tmp, 'rate4');
    const res = await mainInProcess(['run', '--target', fixed.url, '--profile', 'constant', '--rate', '4', '--max-seconds', '3', '--output-tokens', '40', '--prompt-tokens', '32', '--tokenizer', 'approx', '--out', out, '--no-progress']);
    expect(res.code, res.stderr).toBe(0);
    const { doc, records } = readRunFolder(out);
    const s = doc.stages[0]!;
    expect(s.window?.rule).toBe('steady');
    expect(s.requestThroughput).toBeGreaterThan(3.6);
    expect(s.requestThroughput).toBeLessThan(4.4);
    expect(s.sendRate).toBeGreaterThan(3.6);
    expect(s.belowTarget).toBe(false);
    // Ramp-up requests are saved but left out of the figures.
    expect(s.requests.warmup).toBeGreaterThan(0);
    expect(records.filter((r) => r.warmup && r.cooldown !== true)).toHaveLength(s.requests.warmup);
    // So are the cool-down's, sent after the window while its last requests finished.
    expect(records.filter((r) => r.cooldown === true)).toHaveLength(s.requests.cooldown ?? 0);
    expect(s.window!.lengthS).toBeGreaterThanOrEqual(3);
    // The table says how many requests the figures rest on, and where the window lay.
    expect(res.stdout).toMatch(/\| ok\/sent \|/);
    expect(res.stdout).toContain(`${s.requests.ok}/${s.requests.total}`);
    expect(res.stdout).toMatch(/steady window/);
  });

  it('flags a row the server cannot keep up with (*), stops it early once over-saturated, and the rows after it still run', async () => {
    // 2 slots × 1 / (0.02 + 19 × 0.01 s) ≈ 9.5 req/s of capacity.
    const slots = await startSlotServer({ slots: 2, prefillMs: 20, tokenMs: 10, metrics: true });
    try {
      const out = join(tmp, 'overload');
      const started = Date.now();
      // 1-s rows: the rows at 3 req/s are held open up to 3 s (about 10 requests); the row at 20 req/s is stopped as
      // over-saturated before its window could close (its requests' latency keeps growing, and holds it open).
      const res = await mainInProcess(['run', '--target', slots.url, '--profile', 'constant', '--rate', '3,20,3', '--max-seconds', '1', '--output-tokens', '20', '--prompt-tokens', '32', '--tokenizer', 'approx', '--drain', '2', '--out', out, '--no-progress']);
      expect(res.code, res.stderr).toBe(0);
      const { doc } = readRunFolder(out);
      const [low, high, after] = doc.stages;
      expect(low!.belowTarget).toBe(false);
      expect(high!.belowTarget).toBe(true);
      // Twice the capacity: the queue grows without bound, so the row stops within seconds instead of running its
      // window and a drain of a backlog (window.ts saturationStop: completions < 70% of sends, in flight and TTFT up).
      expect(high!.overSaturated).toMatch(/over-saturated: \d+ completions for \d+ sends .* in flight \d+ → \d+, time to first token/);
      expect(high!.overload).toBe(high!.overSaturated);
      expect(res.stdout).toMatch(/asynchronous@20\.00 req\/sec \*/);
      expect(res.stdout).toMatch(/^- \* overloaded .*asynchronous@20\.00 req\/sec — over-saturated/m);
      // The sweep goes on: the row after it is measured, below capacity again.
      expect(after!.belowTarget).toBe(false);
      expect(after!.requests.ok).toBeGreaterThan(5);
      expect(Date.now() - started).toBeLessThan(60_000);
    } finally {
      await slots.close();
    }
  });

  it('stops a closed-loop row after a streak of fast failures instead of sending thousands', async () => {
    const failing = await startFixedDelayServer({ ttftMs: 1, itlMs: 1, failWith: { status: 503, body: '{"error":{"message":"Service Unavailable"}}' } });
    try {
      const out = join(tmp, 'storm');
      const res = await mainInProcess(['run', '--target', failing.url, '--api', 'openai-completions', '--model', 'test-model', '--profile', 'synchronous', '--max-seconds', '3', '--tokenizer', 'approx', '--out', out, '--no-progress']);
      expect(res.code).toBe(1);
      expect(failing.requests).toBeLessThanOrEqual(25);
      const { doc } = readRunFolder(out);
      expect(doc.stages[0]!.stoppedEarly).toMatch(/20 failures in a row/);
      expect(res.stdout).toMatch(/stopped after 20 failures in a row.*503/);
      expect(res.stderr).toMatch(/^error: .*the server is refusing every request$/m);
      expect(res.stderr).not.toMatch(/^\s+at /m);
    } finally {
      await failing.close();
    }
  });

  it('grid: throughput columns from the burst, latency columns from a one-at-a-time pass (seed 004 compares like with like)', async () => {
    const out = join(tmp, 'grid');
    const res = await mainInProcess(['run', '--target', fixed.url, '--profile', 'grid', '--input-lens', '64', '--output-lens', '10', '--num-prompts', '20', '--tokenizer', 'approx', '--out', out, '--no-progress']);
    expect(res.code, res.stderr).toBe(0);
    const { doc } = readRunFolder(out);
    const burst = doc.stages.find((s) => s.grid?.role === 'throughput')!;
    const pass = doc.stages.find((s) => s.grid?.role === 'latency')!;
    expect(burst.requests.ok).toBe(20);
    expect(pass.requests.ok).toBe(10);
    // One request at a time: e2e = 50 + 9 × 20 = 230 ms for 10 output tokens → ≈ 23 ms per output token.
    const perOut = pass.metrics.latencyPerOutputTokenMs!.mean;
    expect(perOut).toBeGreaterThan(22);
    expect(perOut).toBeLessThan(30);
    const row = res.stdout.split('\n').find((l) => /^\|\s+64\s+\|\s+10\s+\|/.test(l))!;
    const cells = row.split('|').map((c) => c.trim());
    expect(Number(cells[6])).toBeCloseTo(perOut, 2);
    expect(Number(cells[7])).toBeGreaterThan(45); // TTFT column
    expect(Number(cells[8])).toBeGreaterThan(18); // ITL column
    expect(res.stdout).toMatch(/latency columns \(per token, per output token, TTFT, ITL\) from a low-load pass of 10 requests one at a time/);
  });
});

describe('predict uses the same window rules as run', () => {
  let fixed: FixedDelayServer;
  beforeAll(async () => {
    fixed = await startFixedDelayServer({ ttftMs: 5, itlMs: 5, model: 'fixed-model' });
  });
  afterAll(() => fixed.close());

  it('same default row length and window text; --rate 4 predicts 4 req/s over the steady window', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ib-predict-'));
    try {
      const res = await mainInProcess(['predict', '--profile', 'constant', '--rate', '4', '--out', dir, '--json']);
      expect(res.code, res.stderr).toBe(0);
      const doc = JSON.parse(res.stdout) as { windowRules: string; stages: Array<{ requestThroughput: number; window?: { rule: string; lengthS: number } }> };
      const s = doc.stages[0]!;
      expect(s.window?.rule).toBe('steady');
      expect(s.requestThroughput).toBeGreaterThan(3.8);
      expect(s.requestThroughput).toBeLessThan(4.2);
      expect(doc.windowRules).toMatch(/closes on the first completion 5 s later/);
      // The window rules are the options' (cli/window-rules.ts), whatever the target: a quick server stands in for
      // the built-in simulator, which would start in a worker thread.
      const run = await mainInProcess(['run', '--target', fixed.url, '--profile', 'constant', '--rate', '4', '--max-seconds', '1', '--output-tokens', '4', '--prompt-tokens', '16', '--tokenizer', 'approx', '--out', join(dir, 'run'), '--json', '--no-progress']);
      expect(run.code, run.stderr).toBe(0);
      const runDoc = JSON.parse(run.stdout) as { windowRules: string };
      expect(runDoc.windowRules.replace('completion 1 s later', '').replace(/up to 3 s/, '')).toBe(doc.windowRules.replace('completion 5 s later', '').replace(/up to 15 s/, ''));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
