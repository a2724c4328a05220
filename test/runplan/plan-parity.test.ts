import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRunPlan } from '../../src/runplan/execute.js';
import { planRunOptions } from '../../src/runplan/resolve.js';
import { httpPlanRunner, virtualPlanRunner } from '../../src/runplan/runners.js';
import { parseRunPlan, type RunPlan } from '../../src/runplan/schema.js';
import { setupPredictWorkload } from '../../src/runplan/workload-setup.js';
import type { BenchmarkResult } from '../../src/load/benchmark.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { startSimServer, type SimServer } from '../../src/sim/server/index.js';
import { createVirtualStageRunner } from '../../src/sim/virtual-runner.js';
import { HttpTarget } from '../../src/transport/http.js';
import { loadApproxTokenizer } from '../../src/workload/tokenizer.js';
import { runCli } from '../helpers/cli.js';

/**
 * issue 30: one plan, two runners. A plan resolved by `run --dry-run` against `inferbench sim` is executed twice by
 * the same executor: in virtual time (predict's runner) and for real over HTTP against that server (run's runner). Both
 * must send the same requests — ids, prompt lengths, scheduled send times from the row's start (computed, never
 * measured) — and, for a shard, the same share of them. (Where a windowed row's window closes depends on how fast the
 * server answers; test/load/driver-parity.test.ts checks the window decisions that do not.) Rows are a few short requests so the real runs stay brief.
 */
const ENGINE = { engine: 'vllm', model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1 } as const;
const COMMON = ['--api', 'openai-completions', '--tokenizer', 'approx', '--prompt-dist', 'uniform:8,64', '--output-tokens', '4', '--seed', '7', '--no-progress'];

interface Sent {
  id: number;
  /** Sent by the cool-down (after the window, until the measured requests ended): how many depends on the server's speed. */
  cooldown: boolean;
  promptTokens: number;
  scheduledMs?: number;
}

function sentOf(result: BenchmarkResult, records: readonly RequestRecord[], closed: boolean): Sent[] {
  return records
    .map((r) => ({
      id: r.id,
      cooldown: r.cooldown === true,
      promptTokens: r.requestedPromptTokens as number,
      // A closed loop sends when a stream's last request ended: its times depend on the server, not the plan.
      ...(closed ? {} : { scheduledMs: Math.round((r.scheduledAtMs - (result.results[r.stage]?.startedAtMs ?? Number.NaN)) * 1e3) / 1e3 }),
    }))
    .sort((a, b) => a.id - b.id);
}

describe('one plan, two runners: virtual time and the simulator over HTTP send the same requests', () => {
  let sim: SimServer;
  beforeAll(async () => {
    sim = await startSimServer({ ...ENGINE, seed: 3 });
  });
  afterAll(async () => sim.close());

  async function planOf(load: string[]): Promise<RunPlan> {
    const res = await runCli(['run', '--dry-run', '--target', sim.url, ...COMMON, ...load]);
    expect(res.code, res.stderr).toBe(0);
    return parseRunPlan(res.stdout, 'run --dry-run');
  }

  async function both(plan: RunPlan): Promise<{ virtual: BenchmarkResult; real: BenchmarkResult; realRecords: RequestRecord[] }> {
    const prompts = await setupPredictWorkload(planRunOptions(plan));
    const shard = plan.distribution.shard;
    const virtualRunner = createVirtualStageRunner({ ...ENGINE, seed: 3 }, { seed: plan.workload.seed, drainMs: plan.window.drainSeconds * 1000, ...(shard ? { shard } : {}) });
    const virtual = await executeRunPlan(plan, virtualPlanRunner(virtualRunner), [], { prompts });
    const target = new HttpTarget({ baseUrl: sim.url, connections: 16 });
    try {
      const runner = httpPlanRunner(plan, {
        baseUrl: sim.url, sender: target, probeTarget: target, tokenizer: await loadApproxTokenizer(), workload: prompts.workload,
        signal: new AbortController().signal, say: () => undefined,
      });
      // Run's records reach its observers (the run writer) as requests end; virtual time keeps them in the result.
      const realRecords: RequestRecord[] = [];
      const real = await executeRunPlan(plan, runner, [{ onRecord: (r) => void realRecords.push(r) }], { prompts });
      return { virtual, real, realRecords };
    } finally {
      await target.close();
    }
  }

  it.each([
    ['constant', ['--profile', 'constant', '--rate', '40', '--max-requests', '10']],
    ['concurrent', ['--profile', 'concurrent', '--concurrency', '3', '--max-requests', '9']],
    ['burst (--rate inf)', ['--profile', 'constant', '--rate', 'inf', '--max-requests', '8']],
    ['shard 1/2 of a constant', ['--profile', 'constant', '--rate', '40', '--max-requests', '10', '--shard', '1/2']],
  ])('%s', async (name, load) => {
    const plan = await planOf(load);
    const { virtual, real, realRecords } = await both(plan);
    const closed = name === 'concurrent';
    const v = sentOf(virtual, virtual.results.flatMap((s) => s.records), closed);
    const r = sentOf(real, realRecords, closed);
    expect(v.length).toBeGreaterThan(0);
    // The same schedule on both clocks: ids, prompts and send times agree request for request. How far a windowed
    // row runs along it (where its window closes, how long its cool-down lasts) follows the server's speed, so the
    // shorter list is compared with the start of the longer one; both must hold the row's ramp, window and more.
    const strip = (xs: Sent[]): Omit<Sent, 'cooldown'>[] => xs.map(({ cooldown: _c, ...x }) => x);
    const n = Math.min(r.length, v.length);
    expect(n).toBeGreaterThanOrEqual(plan.distribution.shard ? 4 : 8);
    expect(strip(r.slice(0, n))).toEqual(strip(v.slice(0, n)));
    // Every request but the cool-down's (cancelled once the measured ones ended) succeeded against the real server.
    expect(realRecords.filter((x) => !x.cooldown).map((x) => `${x.id} ${x.status}`).filter((x) => !x.endsWith(' ok'))).toEqual([]);
    expect(real.stages.map((s) => s.label)).toEqual(virtual.stages.map((s) => s.label));
    if (plan.distribution.shard) expect(v.every((s) => s.id % 2 === 1)).toBe(true);
  });
});
