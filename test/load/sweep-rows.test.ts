import { describe, expect, it } from 'vitest';
import { DEFAULT_SIM } from '../../src/cli/defaults.js';
import { runBenchmark } from '../../src/load/benchmark.js';
import { nextStage, rateLabel, type ProfileConfig } from '../../src/load/profiles.js';
import { DEFAULT_MIN_SAMPLES } from '../../src/load/window.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import { rowNoteLines } from '../../src/report/row-notes.js';
import { createVirtualStageRunner } from '../../src/sim/virtual-runner.js';
import { createFixedLengthWorkload } from '../../src/workload/synthetic.js';

/**
 * The default sweep (512 in / 128 out, --max-seconds 5) in virtual time: its rows must satisfy their own rules
 * (issue 51 items 9 and 12 b–c).
 */
const sweep = async (sim: Parameters<typeof createVirtualStageRunner>[0], seed: number): Promise<StageSummary[]> => {
  const runner = createVirtualStageRunner({ ...sim, seed }, { seed });
  const res = await runBenchmark({ profile: 'sweep', limits: { maxSeconds: 5 }, workload: createFixedLengthWorkload(512, 128) }, runner);
  return res.stages;
};

/**
 * A slow server like the llama.cpp one of the real-engine check (4 slots, one CPU thread): a 7B model on a
 * compute-bound CPU, where 4 slots add only ~17% to one request at a time (0.62 → 0.72 req/s).
 */
const SLOW_4_SLOTS = { engine: 'llamacpp', model: 'Llama-2-7B', gpu: 'cpu:1c:4000:10000gflops:32gib', gpus: 1, quant: 'q4_0' };

describe("the default sweep's rows hold enough requests to describe their load", () => {
  it('`npx inferbench run` (Qwen2-7B on an A100, simulated): no row warns about the default (its synchronous row held 13 in 15.7 s)', async () => {
    const stages = await sweep(DEFAULT_SIM, 42);
    expect(stages).toHaveLength(11);
    const sync = stages[0] as StageSummary;
    expect(sync.requests.total).toBeGreaterThanOrEqual(DEFAULT_MIN_SAMPLES);
    expect(stages.filter((s) => s.fewRequests).map((s) => s.label)).toEqual([]);
    expect(rowNoteLines(stages).filter((l) => l.startsWith('too few requests') || l.startsWith('†'))).toEqual([]);
  }, 60_000);

  it('a slow 4-slot server (0.6–0.7 req/s): every row holds 20 with distinct labels, and the throughput row measures the 4 slots, not a queue', async () => {
    const stages = await sweep(SLOW_4_SLOTS, 7);
    expect(stages).toHaveLength(11);
    // Each row held 10–11 requests in a 15–16-s window before (3 × --max-seconds), every one flagged "too few".
    for (const s of stages) expect(s.requests.total, s.label).toBeGreaterThanOrEqual(DEFAULT_MIN_SAMPLES);
    expect(stages.filter((s) => s.fewRequests).map((s) => s.label)).toEqual([]);
    expect(new Set(stages.map((s) => s.label)).size).toBe(stages.length);
    // The throughput row: 16 in flight queued 12 at the server (it kept them: time to first token 19.1 s against
    // 1.0 s one at a time); the search goes down to the 4 the server served at once (2.6 s: prompts beside 3 decoding).
    const sync = stages.find((s) => s.label === 'synchronous') as StageSummary;
    const throughput = stages.find((s) => s.label === 'throughput') as StageSummary;
    const search = throughput.window?.capSearch;
    expect(search?.steps[0]).toMatchObject({ cap: 16, queued: true, servingAtOnce: 4 });
    expect(search?.cap).toBe(4);
    expect(search?.measuredInFlight?.max).toBe(4);
    expect(throughput.requestThroughput).toBeGreaterThan(sync.requestThroughput);
    expect(throughput.metrics.ttftMs?.mean as number).toBeLessThan(4 * (sync.metrics.ttftMs?.mean as number));
    expect(throughput.steadyWarnings ?? []).toEqual([]);
    expect(rowNoteLines(stages).find((l) => l.startsWith('throughput: kept'))).toMatch(
      /^throughput: kept 4 requests in flight; the window measured 4\.0 in flight on average, at most 4 \(searched: 16 → 0\.\d\d req\/s \(queued at the server, which served 4 at once: the rest only waited\), 4 → 0\.\d\d req\/s\)$/,
    );
  }, 60_000);

  it('rates that read alike at two decimals get more (0.666 and 0.675 were both @0.67)', () => {
    const done = [{ requestThroughput: 0.666 }, { requestThroughput: 0.74 }] as StageSummary[];
    const cfg: ProfileConfig = { profile: 'sweep', limits: { maxSeconds: 5 }, workload: createFixedLengthWorkload(512, 128) };
    const labels: string[] = [];
    for (let i = 0; i < 9; i++) labels.push((nextStage(cfg, [...done, ...Array.from({ length: i }, () => done[1] as StageSummary)]) as { label: string }).label);
    expect(new Set(labels).size).toBe(9);
    expect(labels[0]).toBe('asynchronous@0.673 req/sec');
    expect(labels[8]).toBe('asynchronous@0.733 req/sec');
    // Rates apart at two decimals keep two.
    expect(rateLabel(2.94, [2.94, 5.11, 7.28])).toBe('asynchronous@2.94 req/sec');
    expect(rateLabel(4)).toBe('asynchronous@4.00 req/sec');
  });
});
