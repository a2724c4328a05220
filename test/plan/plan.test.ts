import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { planCommand } from '../../src/cli/plan-command.js';
import { resolvePlanOptions, type PlanFlags } from '../../src/cli/plan-options.js';
import { paretoChart, paretoPoints } from '../../src/plan/chart.js';
import { evaluateCandidate } from '../../src/plan/evaluate.js';
import { workerLane } from '../../src/plan/pool.js';
import { planJson } from '../../src/plan/outputs.js';
import { runPlan } from '../../src/plan/plan.js';
import { renderPlan } from '../../src/plan/render.js';
import type { PlanCandidate, PlanResult } from '../../src/plan/types.js';

// A small space searched in virtual time on the test's own thread (--threads 1: no worker).
const flags: PlanFlags = {
  model: 'Qwen2-7B-Instruct', rate: '6', promptTokens: '512', outputTokens: '128', slo: 'ttft:1000,itl:50',
  gpu: 'L40S,A100-80GB,H100', tp: '1,2', quant: 'fp16,awq', engine: 'vllm,sglang', threads: '1', maxSeconds: '3',
};

const withoutTimes = (p: unknown): unknown =>
  JSON.parse(JSON.stringify(p, (k, v: unknown) => (k === 'elapsedMs' ? 0 : v)));

describe('plan (virtual time, one thread)', () => {
  let pruned: PlanResult;
  let exhaustive: PlanResult;

  it('searches every candidate that can run and ranks the feasible ones by cost', async () => {
    pruned = await runPlan(resolvePlanOptions(flags));
    expect(pruned.counts.total).toBe(3 * 2 * 2 * 2);
    expect(pruned.counts.searched + pruned.counts.pruned + pruned.counts.skipped).toBe(pruned.counts.total);
    expect(pruned.counts.feasible).toBeGreaterThan(0);
    const feasible = pruned.candidates.filter((c) => c.feasible);
    const costs = feasible.map((c) => c.costPerHour as number);
    expect(costs).toEqual([...costs].sort((a, b) => a - b));
    expect(feasible.map((c) => c.rank)).toEqual(feasible.map((_, i) => i + 1));
    for (const c of feasible) {
      // Sized on the pessimistic end of the capacity's interval (default --interval-level 80); the point count beside.
      expect(c.replicas).toBe(Math.max(1, Math.ceil(6 / (c.capacityInterval?.low ?? (c.capacityPerReplica as number)) - 1e-9)));
      expect(c.replicasAtPrediction).toBe(Math.max(1, Math.ceil(6 / (c.capacityPerReplica as number) - 1e-9)));
      expect(c.atLoad?.meetsSlo).toBe(true);
      expect(c.launch).toBeTruthy();
    }
  });

  it('verifies the top answer alone at its share of the load, with a command that repeats it', () => {
    const top = pruned.candidates[0];
    const v = pruned.verification;
    expect(v?.shape).toEqual({ gpu: top?.gpu, gpus: top?.gpus, quant: top?.quant, engine: top?.engine });
    expect(v?.ratePerReplica).toBeCloseTo(6 / (top?.replicas as number), 3);
    expect(v?.ratePerReplica).toBeGreaterThanOrEqual(6 / (top?.replicas as number));
    expect(v?.point.meetsSlo).toBe(true);
    expect(v?.requests).toBeGreaterThan(20);
    expect(v?.command).toMatch(/^inferbench predict --engine \S+ --model Qwen2-7B-Instruct --gpu \S+ --gpus \d .*--profile constant --rate \S+ --prompt-tokens 512 --output-tokens 128 --slo ttft:1000,itl:50 --max-seconds 30 --seed 43$/);
  });

  it('prunes only what cannot be cheapest: the exhaustive search gives the same answer', async () => {
    exhaustive = await runPlan(resolvePlanOptions({ ...flags, exhaustive: true }));
    expect(pruned.counts.pruned).toBeGreaterThan(0);
    expect(exhaustive.counts.pruned).toBe(0);
    expect(exhaustive.counts.searched).toBeGreaterThanOrEqual(pruned.counts.searched);
    const best = exhaustive.candidates[0];
    expect([pruned.candidates[0]?.gpu, pruned.candidates[0]?.costPerHour]).toEqual([best?.gpu, best?.costPerHour]);
    for (const c of pruned.candidates.filter((x) => x.status === 'pruned')) {
      expect(c.gpus * c.gpuHourPrice).toBeGreaterThan(best?.costPerHour as number);
      expect(c.reason).toMatch(/^one replica costs \$[\d.]+\/h, more than the cheapest deployment found/);
    }
  });

  // The same plan run again is the same plan: the pruned search (pruning, ranking and verification; a fifth of the
  // exhaustive search's CPU) run twice, and every candidate both searches evaluated (after different searches, so
  // nothing one run left behind moves the next) has the same search, capacity and figures, timings aside.
  it('is deterministic', async () => {
    const again = await runPlan(resolvePlanOptions(flags));
    expect(withoutTimes(again)).toEqual(withoutTimes(pruned));
    const key = (c: PlanCandidate): string => `${c.gpu} ${c.gpus} ${c.quant} ${c.engine}`;
    const evaluation = (c: PlanCandidate | undefined): unknown => withoutTimes({
      search: c?.search, capacityPerReplica: c?.capacityPerReplica, capacityInterval: c?.capacityInterval, atLoad: c?.atLoad, atCapacity: c?.atCapacity,
      replicas: c?.replicas, costPerHour: c?.costPerHour, feasible: c?.feasible, reason: c?.reason, launch: c?.launch,
    });
    const both = pruned.candidates.filter((c) => c.search !== undefined);
    expect(both.length).toBe(pruned.counts.searched);
    for (const c of both) expect(evaluation(exhaustive.candidates.find((x) => key(x) === key(c))), key(c)).toEqual(evaluation(c));
  });

  it('prints the table, launch commands, verification, reasons and the time taken; the JSON keeps its field names', () => {
    const text = renderPlan(exhaustive, { top: 5, launches: 3, all: false });
    expect(text).toMatch(/^plan: Qwen2-7B-Instruct at 6.00 req\/s \(768 output tokens\/s/);
    expect(text).toMatch(/\| {2}1 {2}\|/);
    expect(text).toMatch(/Launch one replica/);
    expect(text).toMatch(/verification: .* — meets the SLO/);
    expect(text).toMatch(/evaluated 24 candidates in [\d.]+ s on 1 thread: \d+ capacity searches/);
    const json = planJson(exhaustive, '0.0.0') as { candidates: Array<Record<string, unknown>>; counts: object; verification: object };
    expect(Object.keys(json.candidates[0] ?? {})).toEqual(expect.arrayContaining(['gpu', 'gpus', 'quant', 'engine', 'replicas', 'feasible', 'reason', 'capacityPerReplica', 'costPerHour', 'costPerMillionOutputTokens', 'tokensPerSecondPerGpu', 'tokensPerSecondPerUser']));
    expect(json.verification).toBeTruthy();
  });

  it("names the table's tok/s per GPU for what it is: at capacity, the Pareto chart's axis, and not the same in every row (issue 36 item 10)", () => {
    const text = renderPlan(exhaustive, { top: 24, launches: 0, all: false });
    const lines = text.split('\n').filter((l) => l.startsWith('|'));
    const cells = (l: string): string[] => l.split('|').slice(1, -1).map((x) => x.trim());
    const col = cells(lines[0] as string).indexOf('Output tok/s per GPU at capacity');
    expect(col).toBeGreaterThan(0);
    const feasible = exhaustive.candidates.filter((c) => c.feasible);
    const shown = lines.slice(2).map((l) => cells(l)[col]);
    expect(shown).toEqual(feasible.map((c) => (c.atCapacity?.outputTokensPerSPerGpu as number).toFixed(1)));
    expect(new Set(shown).size).toBeGreaterThan(1);
    expect(text).toMatch(/tok\/s per GPU at capacity = output tokens\/s of one replica at its capacity over its GPUs/);
    expect(JSON.stringify(paretoChart(exhaustive))).toMatch(/output tokens\/s per GPU at capacity/);
  });

  it('puts every configuration with a capacity on the Pareto chart and marks the frontier', () => {
    const pts = paretoPoints(exhaustive.candidates);
    expect(pts.length).toBe(exhaustive.candidates.filter((c) => c.capacityPerReplica !== null).length);
    const frontier = pts.filter((p) => p.frontier);
    expect(frontier.length).toBeGreaterThan(0);
    for (const p of pts.filter((x) => !x.frontier)) expect(frontier.some((f) => f.perGpu >= p.perGpu && f.perUser >= p.perUser)).toBe(true);
  });

  it('takes the load as output tokens per second', () => {
    const opts = resolvePlanOptions({ ...flags, rate: undefined, outputTokensPerS: '768' });
    expect(opts.job.rate).toBeCloseTo(6, 9);
  });

  it('a worker thread gives the same answer for a candidate as the main thread', async () => {
    const { job } = resolvePlanOptions(flags);
    const shape = { gpu: 'L40S', gpus: 1, quant: 'awq' as const, engine: 'vllm' };
    const lane = await workerLane(job);
    try {
      const [inWorker, here] = await Promise.all([lane.evaluate(shape), evaluateCandidate(job, shape)]);
      expect({ ...inWorker, elapsedMs: 0 }).toEqual({ ...here, elapsedMs: 0 });
      expect(here.capacityPerReplica).toBeGreaterThan(0);
    } finally {
      await lane.close();
    }
  });

  it('exits 1 and says so when nothing meets the SLO at that load', async () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let text = '';
    stdout.on('data', (d: Buffer) => (text += d.toString()));
    const { plan, exitCode } = await planCommand({ ...flags, slo: 'ttft:5', gpu: 'L40S', tp: '1', engine: 'vllm' }, { stdout, stderr });
    expect(exitCode).toBe(1);
    expect(plan.counts.feasible).toBe(0);
    expect(plan.verification).toBeNull();
    expect(text).toMatch(/No candidate meets the SLO at this load/);
    expect(text).toMatch(/SLO not met even at one request at a time .*\n.*TTFT p99 \d+ ms/);
  });
});
