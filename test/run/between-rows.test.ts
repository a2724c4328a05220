import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mainInProcess, type MainInProcessResult } from '../helpers/main-in-process-rows.js';
import { readRunFolder } from '../helpers/run-folder.js';
import { startSlotServer, type SlotServer } from '../helpers/slot-server.js';
import { startSimServer } from '../../src/sim/server/index.js';

/**
 * Issue 19 items 2 and 3, against a server that behaves as llama.cpp's did: a prefix cache that reports
 * cached_tokens, and requests whose client has left served anyway (a backlog the next row would inherit).
 * The runs go through the CLI's own main in this process (test/helpers/main-in-process-rows.ts); the row after a
 * cut judged by a one-token probe (no /metrics) is checked in idle-after-cut.test.ts.
 */
describe('rows that do not contaminate each other', () => {
  let tmp: string;
  /** The 2-slot server with /metrics of the default sweep (and, after it, of the same --seed again). */
  let server: SlotServer;
  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'ib-rows-'));
    server = await startSlotServer({ slots: 2, prefillMs: 40, tokenMs: 8, metrics: true });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  const ROWS = ['--max-seconds', '0.5', '--output-tokens', '10', '--prompt-tokens', '48', '--tokenizer', 'approx', '--no-progress'];
  const SWEEP = ['--profile', 'sweep', '--sweep-rates', '2', ...ROWS];
  const sweep = (url: string, out: string, extra: string[] = []): Promise<MainInProcessResult> => mainInProcess(['run', '--target', url, ...SWEEP, '--out', out, ...extra]);

  /**
   * The default sweep on `server`, run once for the two tests that read it: its result, and the server's counters
   * once it has finished what the run left it (requests the last row cancelled are still served to the end), before
   * any later run on the same server adds to them.
   */
  let fresh: Promise<{ res: MainInProcessResult; out: string; stats: SlotServer['stats'] }> | undefined;
  const freshSweep = (): NonNullable<typeof fresh> =>
    (fresh ??= (async () => {
      const out = join(tmp, 'fresh');
      const res = await sweep(server.url, out);
      for (let i = 0; i < 500 && server.running() + server.waiting() > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(server.running() + server.waiting()).toBe(0);
      return { res, out, stats: { ...server.stats } };
    })());

  it('sends prompts no earlier row sent; a server answering from its cache anyway is flagged on the row (‡) and under the table', async () => {
    const first = await freshSweep();
    expect(first.res.code, first.res.stderr).toBe(0);
    const { doc, records } = readRunFolder(first.out);
    expect(doc.stages.length).toBe(4);
    expect(first.stats.cacheHits).toBe(0);
    expect(records.every((r) => (r.cachedTokens ?? 0) === 0)).toBe(true);
    expect(doc.stages.some((s) => s.unintendedCache)).toBe(false);

    // The same seed again: the same prompts (its first row's are the sweep's first row's), which this server has
    // cached. The row must say so.
    const out = join(tmp, 'cached');
    const again = await mainInProcess(['run', '--target', server.url, '--profile', 'synchronous', ...ROWS, '--out', out]);
    expect(again.code, again.stderr).toBe(0);
    const cached = readRunFolder(out).doc;
    expect(server.stats.cacheHits).toBeGreaterThan(0);
    const flagged = cached.stages.filter((s) => s.unintendedCache);
    expect(flagged.length).toBeGreaterThan(0);
    expect(again.stdout).toMatch(/synchronous ‡/);
    expect(again.stdout).toMatch(/‡ WARNING: the server answered from its prefix cache/);
  }, 240_000);

  it('a server that reports no cached tokens per request (vLLM by default) is caught by its /metrics: the same --seed run twice is flagged ‡ the second time', async () => {
    // The simulated vLLM V1 caches prefixes and, like vLLM without --enable-prompt-tokens-details, reports them only
    // in /metrics (prefix_cache_hits/queries counters).
    const sim = await startSimServer({ engine: 'vllm', model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1, seed: 5, modelTimeScale: 0.2 });
    // A few requests are enough: every prompt of the second run is one of the first run's.
    const once = (out: string): Promise<MainInProcessResult> =>
      mainInProcess(['run', '--target', sim.url, '--profile', 'constant', '--rate', '4', '--max-requests', '4', '--prompt-tokens', '256', '--output-tokens', '8', '--out', join(tmp, out), '--no-progress']);
    try {
      const first = await once('sim-fresh');
      expect(first.code, first.stderr).toBe(0);
      expect(readRunFolder(join(tmp, 'sim-fresh')).doc.stages.some((s) => s.unintendedCache)).toBe(false);
      expect(first.stdout).not.toMatch(/‡/);

      const again = await once('sim-again');
      expect(again.code, again.stderr).toBe(0);
      const row = readRunFolder(join(tmp, 'sim-again')).doc.stages[0];
      expect(row?.unintendedCache).toMatchObject({ source: 'server-metrics' });
      expect(row?.unintendedCache?.shareOfPromptTokens).toBeGreaterThan(0.5);
      expect(again.stdout).toMatch(/asynchronous@4\.00 req\/sec ‡/);
      expect(again.stdout).toMatch(/‡ WARNING: the server answered from its prefix cache .*pass another --seed.*by the server's \/metrics/);
    } finally {
      await sim.close();
    }
  }, 240_000);

  it('the default sweep against a 2-slot server that keeps serving abandoned requests: no backlog, every row below capacity at low TTFT, waits said', async () => {
    const { res, out, stats } = await freshSweep();
    expect(res.code, res.stderr).toBe(0);
    const { doc } = readRunFolder(out);
    // The throughput row keeps a bounded number in flight and cuts none of its measured requests.
    const throughput = doc.stages.find((s) => s.label === 'throughput')!;
    expect(throughput.requests.incomplete).toBe(0);
    expect(throughput.window?.capSearch?.cap).toBeLessThanOrEqual(64);
    // What this server served for a client that had left is only what the rows' cool-downs cancelled once their
    // measured requests had finished (unmeasured); the idle wait before each row waited it out (below).
    const cancelled = doc.stages.reduce((n, s) => n + (s.requests.cooldownCut ?? 0), 0);
    expect(stats.abandonedServed).toBeLessThanOrEqual(cancelled);
    const sync = doc.stages.find((s) => s.label === 'synchronous')!.metrics.ttftMs!.mean;
    for (const s of doc.stages.slice(1)) expect(s.idleWait?.idle, s.label).toBe(true);
    for (const s of doc.stages.filter((x) => x.kind === 'open' && !x.belowTarget)) {
      expect(s.requests.incomplete, s.label).toBe(0);
      expect(s.metrics.ttftMs!.mean, s.label).toBeLessThan(3 * sync + 50);
    }
    expect(res.stdout).toMatch(/idle server before each row: waited \d+\.\d s in all.*\(server \/metrics: running \+ waiting = 0/);
    // Failure text never lands in a numeric column.
    for (const line of res.stdout.split('\n').filter((l) => l.startsWith('|'))) {
      expect(line.split('|').map((c) => c.trim())[2] ?? '').not.toMatch(/none finished|all failed|E_/);
    }
  }, 240_000);

  it('when a row had to abandon requests (--drain 0), the next row waits until /metrics reads idle, and starts at low TTFT', async () => {
    const cutting = await startSlotServer({ slots: 2, prefillMs: 40, tokenMs: 8, metrics: true });
    try {
      const out = join(tmp, 'abandoned');
      const res = await sweep(cutting.url, out, ['--drain', '0']);
      expect(res.code, res.stderr).toBe(0);
      const { doc } = readRunFolder(out);
      const at = doc.stages.findIndex((s) => s.label === 'throughput');
      expect(doc.stages[at]!.requests.incomplete).toBeGreaterThan(0);
      const after = doc.stages[at + 1]!;
      expect(after.idleWait?.idle).toBe(true);
      // It waited for what the throughput row left (its cap is the 2 slots now: a short backlog, no longer 14 queued).
      expect(after.idleWait!.method).toMatch(/^after throughput cut \d+ requests?: until the server's \/metrics read running \+ waiting = 0 twice/);
      expect(after.idleWait!.waitedS).toBeGreaterThanOrEqual(0.2);
      expect(cutting.stats.abandonedServed).toBeGreaterThan(0);
      const sync = doc.stages.find((s) => s.label === 'synchronous')!.metrics.ttftMs!.mean;
      expect(after.metrics.ttftMs!.mean).toBeLessThan(3 * sync + 50);
    } finally {
      await cutting.close();
    }
  }, 240_000);
});
