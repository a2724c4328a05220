import { describe, expect, it } from 'vitest';
import { DEFAULT_SIM } from '../../src/cli/defaults.js';
import { runBenchmark } from '../../src/load/benchmark.js';
import type { ProfileConfig } from '../../src/load/profiles.js';
import { COOLDOWN_OVER } from '../../src/load/window.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { createVirtualStageRunner } from '../../src/sim/virtual-runner.js';
import { createFixedLengthWorkload } from '../../src/workload/synthetic.js';
import { runCli } from '../helpers/cli.js';

/**
 * Issue 36, item 1: a row keeps its load on after the window (an unmeasured cool-down) until every request measured
 * in it has finished, so its last requests do not finish on a draining server. In virtual time (the default
 * deployment of `predict`: vLLM, Qwen2-7B, 1× A100-80GB, ~22 req/s at 512/128), so every figure is deterministic.
 */
async function runRow(profile: ProfileConfig['profile'], rate: number, maxSeconds: number) {
  const runner = createVirtualStageRunner({ ...DEFAULT_SIM, seed: 42 }, { seed: 42 });
  const res = await runBenchmark({ profile, rates: [rate], limits: { maxSeconds }, workload: createFixedLengthWorkload(512, 128) }, runner);
  const result = res.results[0];
  const summary = res.stages[0];
  if (!result || !summary) throw new Error('no row');
  return { records: result.records, summary, window: result.window };
}

const mean = (xs: RequestRecord[], k: 'itlMs' | 'e2eMs'): number => xs.reduce((a, r) => a + (r[k] as number), 0) / xs.length;

/** Mean ITL and latency of the first and the last quarter of the measured requests, by send time. */
function quarters(records: RequestRecord[]) {
  const measured = records.filter((r) => !r.warmup).sort((a, b) => a.sentAtMs - b.sentAtMs);
  const q = Math.floor(measured.length / 4);
  const first = measured.slice(0, q);
  const last = measured.slice(-q);
  return { n: measured.length, itl: [mean(first, 'itlMs'), mean(last, 'itlMs')], e2e: [mean(first, 'e2eMs'), mean(last, 'e2eMs')] };
}

const within = (a: number, b: number, share: number): boolean => Math.abs(a - b) <= share * Math.max(a, b);

describe('a row measures its steady load, not its own drain (virtual time)', () => {
  it('constant rate below the knee: the first and last quarter of the window agree on ITL and latency', async () => {
    // Before the cool-down: ITL 21.5 ms in the first quarter, 13.2 ms in the last (the server drained under them).
    const { records } = await runRow('constant', 17, 5);
    const q = quarters(records);
    expect(q.n).toBeGreaterThanOrEqual(40);
    expect(within(q.itl[0] as number, q.itl[1] as number, 0.03), `ITL q1 ${q.itl[0]} vs q4 ${q.itl[1]}`).toBe(true);
    expect(within(q.e2e[0] as number, q.e2e[1] as number, 0.03), `latency q1 ${q.e2e[0]} vs q4 ${q.e2e[1]}`).toBe(true);
  });

  it('the cool-down is sent at the row\'s own rate after the window, kept unmeasured, and cancelled once the measured requests finished', async () => {
    const { records, summary, window } = await runRow('constant', 17, 5);
    const closeAt = window?.closeAtMs as number;
    const measured = records.filter((r) => !r.warmup);
    const cooldown = records.filter((r) => r.cooldown === true);
    expect(cooldown.length).toBeGreaterThan(0);
    // Constant arrivals at 17 req/s: the cool-down keeps the same spacing.
    const sends = cooldown.map((r) => r.sentAtMs).sort((a, b) => a - b);
    for (let i = 1; i < sends.length; i++) expect((sends[i] as number) - (sends[i - 1] as number)).toBeCloseTo(1000 / 17, 6);
    for (const r of cooldown) {
      expect(r.warmup).toBe(true);
      expect(r.sentAtMs).toBeGreaterThan(closeAt);
    }
    // Every measured request finished (none cut) before the cool-down's leftovers were cancelled, at that instant.
    const lastMeasuredEnd = Math.max(...measured.map((r) => r.endAtMs));
    expect(measured.every((r) => r.status === 'ok' && r.sentAtMs <= closeAt)).toBe(true);
    const cut = cooldown.filter((r) => r.status === 'incomplete');
    expect(cut.length).toBeGreaterThan(0);
    for (const r of cut) {
      expect(r.endAtMs).toBe(lastMeasuredEnd);
      expect(r.error?.message).toBe(COOLDOWN_OVER);
    }
    // The load was still on when the last measured request finished: the latest cool-down send is within one gap of it.
    expect(lastMeasuredEnd - (sends[sends.length - 1] as number)).toBeLessThan(1000 / 17);
    expect(summary.requests.total).toBe(measured.length);
    expect(summary.requests.cooldown).toBe(cooldown.length);
    expect(summary.requests.cooldownCut).toBe(records.filter((r) => r.warmup && r.status === 'incomplete').length);
    expect(summary.requests.warmup).toBe(records.filter((r) => r.warmup && r.cooldown !== true).length);
  });

  it('throughput row: output tok/s is no more than req/s × output tokens, and its quarters agree', async () => {
    // Before: 3361 tok/s at 21.78 req/s × 128 = 2788 (+21%); ITL 81 → 26 ms from the first to the last quarter.
    const { records, summary } = await runRow('throughput', 0, 5);
    expect(summary.outputTokenThroughput).toBeLessThanOrEqual(summary.requestThroughput * 128 * 1.05);
    const q = quarters(records);
    expect(within(q.itl[0] as number, q.itl[1] as number, 0.05), `ITL q1 ${q.itl[0]} vs q4 ${q.itl[1]}`).toBe(true);
    // Its searched cap stays on in the cool-down: as many in flight when the last measured request finished.
    expect(summary.window?.capSearch?.cap).toBe(256);
    expect(summary.requests.cooldownCut).toBeGreaterThan(200);
  });

  it('predict --max-seconds 5 and 60 agree within 3% on ITL and latency below the knee', async () => {
    // Before: ITL 16.67 ms with 5-s rows, 18.34 ms with 60-s rows at 15 req/s.
    const read = async (seconds: number) => {
      const res = await runCli(['predict', '--profile', 'constant', '--rate', '15', '--max-seconds', String(seconds), '--json']);
      expect(res.code, res.stderr).toBe(0);
      const doc = JSON.parse(res.stdout) as { stages: Array<{ metrics: { itlMs: { mean: number }; e2eMs: { mean: number } } }> };
      return doc.stages[0]?.metrics as { itlMs: { mean: number }; e2eMs: { mean: number } };
    };
    const [short, long] = [await read(5), await read(60)];
    expect(within(short.itlMs.mean, long.itlMs.mean, 0.03), `ITL ${short.itlMs.mean} vs ${long.itlMs.mean}`).toBe(true);
    expect(within(short.e2eMs.mean, long.e2eMs.mean, 0.03), `latency ${short.e2eMs.mean} vs ${long.e2eMs.mean}`).toBe(true);
  }, 120_000);
});
