/**
 * RunPlan as a value (issue 30, items 1 and 6): resolving never changes the options, a plan stands for options
 * that resolve to the same plan again (so `run --plan` rebuilds the same profile), JSON keeps it whole (a
 * `--rate inf` row included), and the observers' fan-out calls every observer, in order, only where it has a hook.
 */
import { describe, expect, it } from 'vitest';
import { resolveRunOptions } from '../../src/config/run-options.js';
import { plannedStageCount } from '../../src/load/profiles.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { fanOut, type RunObserver } from '../../src/runplan/observer.js';
import { buildProfileConfig } from '../../src/runplan/profile-config.js';
import { planRunOptions, planTokenizer, resolveRunPlan, type PlanProbes } from '../../src/runplan/resolve.js';
import { parseRunPlan, runPlanSchema } from '../../src/runplan/schema.js';
import { createLengthsWorkload } from '../../src/workload/synthetic.js';

const PROBES: PlanProbes = {
  toolVersion: '9.9.9',
  server: { dialect: 'openai-chat', model: 'm', engine: 'vllm', engineVersion: '0.11.0', detection: 'vllm 0.11.0, model m' },
  tokenizer: { kind: 'server', name: 'server /tokenize (vllm)', calibration: { specialTokens: 1, requests: 6 } },
  workloadDescription: 'synthetic prompts',
};

const FLAG_SETS: Array<Record<string, string | boolean>> = [
  { target: 'http://127.0.0.1:9/v1', rate: '2,inf', maxRequests: '40', seed: '3', extraBody: '{"top_p":0.9}', slo: 'ttft:500', label: 'l', apiKey: 'sk-secret' },
  { profile: 'concurrent', concurrency: '1,8', promptDist: 'uniform:10,90', outputTokens: '32', outputTokensExplicit: true, maxSeconds: '10', warmup: '2', steadyState: true },
  { profile: 'grid', inputLens: '128,256', outputLens: '64', numPrompts: '20', numPromptsExplicit: true },
  { profile: 'capacity', slo: 'ttft:300', capacityAxis: 'concurrency', shard: undefined as unknown as string },
  { profile: 'constant', rate: '10', shard: '1/3', barrier: '/tmp/b', startAt: '2026-12-01T09:00:00Z', workers: '2', records: 'full', timeoutConnect: '5' },
];

describe('RunPlan: resolve once, a plain JSON value', () => {
  it('never changes the options, holds no secret, survives JSON, and its options resolve to the same plan', () => {
    for (const flags of FLAG_SETS) {
      const opts = resolveRunOptions(Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined)), {});
      const before = structuredClone(opts);
      const plan = resolveRunPlan(opts, PROBES);
      expect(opts).toEqual(before);
      const text = JSON.stringify(plan);
      expect(text).not.toContain('sk-secret');
      const back = parseRunPlan(text, 'plan.json');
      expect(back).toEqual(plan);
      expect(runPlanSchema.parse(back)).toEqual(plan);
      // The options a plan stands for resolve to the same plan: `run --plan` rebuilds what the first run resolved.
      const again = resolveRunPlan(planRunOptions(back), { ...PROBES, server: back.target.resolved as PlanProbes['server'] });
      expect(again).toEqual(plan);
      // …and the same profile: the rows buildProfileConfig makes from either.
      const w = createLengthsWorkload({ kind: 'fixed', value: 10 }, { kind: 'fixed', value: 5 }, 1);
      const strip = (c: ReturnType<typeof buildProfileConfig>): unknown => ({ ...c, workload: undefined, grid: c.grid ? { ...c.grid, workloadFor: undefined } : undefined });
      const a = buildProfileConfig(opts, () => w, w);
      const b = buildProfileConfig(planRunOptions(back), () => w, w);
      expect(strip(b)).toEqual(strip(a));
      expect(plan.load.plannedRows).toBe(plannedStageCount(a));
    }
  });

  it('keeps a --rate inf row and the shard, and takes the caller’s outputs and key', () => {
    const opts = resolveRunOptions({ target: 'http://127.0.0.1:9', rate: '2,inf', maxRequests: '40' }, {});
    const plan = parseRunPlan(JSON.stringify(resolveRunPlan(opts, PROBES)), 'p');
    expect(plan.load.rates).toEqual([2, 'inf']);
    const run = planRunOptions(plan, { out: '/tmp/x', formats: ['json'], apiKey: 'k', shard: { index: 2, count: 4 } });
    expect(run.rates).toEqual([2, Number.POSITIVE_INFINITY]);
    expect(run).toMatchObject({ out: '/tmp/x', formats: ['json'], apiKey: 'k', shard: { index: 2, count: 4 } });
    // The tokenizer resolution settled on is the one the plan's run uses; the options keep what was asked.
    expect(planTokenizer(plan)).toBe('server');
    expect(run.workload.tokenizer).toBeUndefined();
  });
});

describe('RunObserver fan-out', () => {
  it('calls every observer that has the hook, in order, and awaits row edges', async () => {
    const seen: string[] = [];
    const a: RunObserver = { onRecord: (r) => seen.push(`a${r.id}`), onStageEdge: async (i, e) => void seen.push(`a-${e}${i}`) };
    const b: RunObserver = { onRecord: (r) => seen.push(`b${r.id}`), onDispatch: () => seen.push('b-dispatch') };
    const all = fanOut([a, undefined, b]);
    expect(all.has('onStageEdge')).toBe(true);
    expect(all.has('onStageStart')).toBe(false);
    all.onDispatch();
    all.onRecord({ id: 7 } as RequestRecord);
    await all.onStageEdge(0, 'start');
    all.onStageStart({ label: 'x' } as never, 0);
    expect(seen).toEqual(['b-dispatch', 'a7', 'b7', 'a-start0']);
  });
});
