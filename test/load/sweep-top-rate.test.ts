import { describe, expect, it } from 'vitest';
import { DEFAULT_SIM } from '../../src/cli/defaults.js';
import { runBenchmark } from '../../src/load/benchmark.js';
import { sweepRates } from '../../src/load/profiles.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import { createVirtualStageRunner } from '../../src/sim/virtual-runner.js';
import { createFixedLengthWorkload } from '../../src/workload/synthetic.js';

/** Issue 36, newcomer finding 12: the sweep's top rate sat exactly at the measured ceiling, so that row was often empty. */
describe("the sweep's top rate", () => {
  const done = (sync: number, max: number): StageSummary[] => [{ requestThroughput: sync }, { requestThroughput: max }] as StageSummary[];

  it('sits 90% of the way from the synchronous to the throughput rate, the rates evenly spaced up to it', () => {
    const rates = sweepRates(done(1, 21), 9);
    expect(rates).toHaveLength(9);
    expect(rates[8]).toBeCloseTo(19, 9);
    expect(rates[0]).toBeCloseTo(1 + 18 / 9, 9);
    for (let k = 1; k < 9; k++) expect((rates[k] as number) - (rates[k - 1] as number)).toBeCloseTo(2, 9);
    // A server hardly faster in parallel than one at a time still gets rising rates, all under its ceiling.
    const flat = sweepRates(done(1, 1.1), 3);
    expect(flat.every((r, k) => r > 1 && r < 1.1 && (k === 0 || r > (flat[k - 1] as number)))).toBe(true);
  });

  it("predict's default sweep: the top row keeps up with its rate (it was 90% of it, marked not steady)", async () => {
    const runner = createVirtualStageRunner({ ...DEFAULT_SIM, seed: 42 }, { seed: 42 });
    const res = await runBenchmark({ profile: 'sweep', limits: { maxSeconds: 5 }, workload: createFixedLengthWorkload(512, 128) }, runner);
    const throughput = res.stages[1] as StageSummary;
    const top = res.stages[res.stages.length - 1] as StageSummary;
    expect(res.stages).toHaveLength(11);
    expect(top.targetRate).toBeLessThan(throughput.requestThroughput);
    expect(top.requestThroughput).toBeGreaterThanOrEqual(0.95 * (top.targetRate as number));
    expect(top.belowTarget).toBe(false);
    expect(top.stoppedEarly).toBeUndefined();
    expect(top.steadyWarnings ?? []).toEqual([]);
  }, 60_000);
});
