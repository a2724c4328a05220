/**
 * `plan` searches replicas × router (issue 34 item 4): with a shared-prefix workload the cheapest candidates run as
 * one cluster behind each router in virtual time (predict --replicas N --router P); each router's answer is the
 * fewest replicas that meet the SLO, the candidates rank by their cheapest option, and the fields the plan had keep
 * their meaning. Also: the lengths-only workload's prefix groups are the ones `run` draws, and their block hashes
 * share exactly the prefix.
 */
import { describe, expect, it } from 'vitest';
import { resolvePlanOptions, type PlanFlags } from '../../src/cli/plan-options.js';
import { runPlan } from '../../src/plan/plan.js';
import { renderPlan } from '../../src/plan/render.js';
import type { PlanResult } from '../../src/plan/types.js';
import { prefixBlockHashes } from '../../src/sim/virtual-prefix.js';
import { createWorkload } from '../../src/workload/create.js';
import { createLengthsWorkload } from '../../src/workload/synthetic.js';
import { loadApproxTokenizer } from '../../src/workload/tokenizer.js';
import { runCli } from '../helpers/cli.js';

// 256 prefixes of 4,096 tokens outgrow one replica's prefix cache: behind round-robin every replica holds every
// prefix and most miss; prefix-aware routing keeps each on one replica.
const flags: PlanFlags = {
  model: 'Qwen2-7B-Instruct', rate: '30', promptTokens: '4200', prefixTokens: '4096', prefixGroups: '256', outputTokens: '64',
  slo: 'ttft:1000,itl:60', gpu: 'L40S', tp: '1', quant: 'fp16', engine: 'vllm', threads: '1', maxSeconds: '3',
  // Routers alone here: prefill/decode splits (on by default for vLLM) have their own test (pd-splits.test.ts).
  pd: 'none',
};

describe('plan: replicas × router (virtual time, one thread)', () => {
  let plan: PlanResult;

  it('evaluates every router on the candidate: the fewest replicas that meet the SLO, prefix-aware with more cache hits', async () => {
    plan = await runPlan(resolvePlanOptions(flags));
    const rc = plan.routerComparison;
    expect(rc?.routers).toEqual(['round-robin', 'least-load', 'prefix-aware']);
    expect(rc?.candidates).toBe(1);
    expect(rc?.prefix).toEqual({ tokens: 4096, groups: 256 });
    const c = plan.candidates[0];
    expect(c?.feasible).toBe(true);
    expect(c?.routers?.map((r) => r.router)).toEqual(rc?.routers);
    for (const r of c?.routers ?? []) {
      expect(r.topology).toBe('replicas');
      const counts = r.tried.map((t) => t.replicas);
      expect(counts).toEqual([...counts].sort((a, b) => a - b));
      if (r.meetsSlo) {
        const n = r.replicas as number;
        // The answer met the SLO; one replica fewer was tried and missed (or it is one replica).
        expect(r.tried.find((t) => t.replicas === n)?.meetsSlo).toBe(true);
        if (n > 1) expect(r.tried.find((t) => t.replicas === n - 1)?.meetsSlo).toBe(false);
        expect(r.costPerHour).toBeCloseTo(n * (c?.gpuHourPrice as number), 9);
        expect(r.totalGpus).toBe(n);
      } else expect(r.replicas).toBeNull();
    }
    const hit = (name: string): number => c?.routers?.find((r) => r.router === name)?.cacheHitRate as number;
    expect(hit('prefix-aware')).toBeGreaterThan(hit('round-robin') + 0.2);
    // Ranked by its cheapest option that meets the SLO.
    const met = (c?.routers ?? []).filter((r) => r.meetsSlo).map((r) => r.costPerHour as number);
    expect(c?.deployment?.costPerHour).toBeCloseTo(Math.min(...met), 9);
    expect(c?.deployment?.topology).toBe('replicas');
    expect(rc?.best?.costPerHour).toBeCloseTo(c?.deployment?.costPerHour as number, 9);
    const text = renderPlan(plan, { top: 10, launches: 3, all: false });
    expect(text).toMatch(/^Routers: the 1 cheapest candidate as one cluster behind round-robin, least-load, prefix-aware at 30\.00 req\/s \(256 shared prefixes of 4096 tokens; .* [\d.]+ s\):$/m);
    expect(text).toMatch(/^ {4}prefix-aware +(\d+ replicas meet the SLO, \$[\d.]+\/h|misses the SLO on every count tried) — [\d.]+% met, TTFT p50 \d+ p99 \d+ ms, ITL p99 [\d.]+ ms, cache hit [\d.]+% \(replicas tried: /m);
    expect(text).toMatch(/^ {2}1× L40S fp16 vllm: prefix-aware (holds 30 req\/s on \d+ replicas where round-robin needs \d+: |misses)/m);
  }, 120_000);

  it('keeps the fields the plan had: the same sizing as with --router none, which adds no router fields', async () => {
    const none = await runPlan(resolvePlanOptions({ ...flags, router: 'none' }));
    expect(none.routerComparison).toBeUndefined();
    const [a, b] = [plan.candidates[0], none.candidates[0]];
    expect(b?.routers).toBeUndefined();
    expect(b?.deployment).toBeUndefined();
    for (const k of ['replicas', 'costPerHour', 'capacityPerReplica', 'costPerMillionOutputTokens', 'replicasAtPrediction'] as const) expect(a?.[k]).toEqual(b?.[k]);
    // Without shared prefixes, no router is compared unless asked.
    const plain = resolvePlanOptions({ ...flags, prefixTokens: undefined, prefixGroups: undefined });
    expect(plain.routers).toBeUndefined();
    expect(resolvePlanOptions({ ...flags, prefixTokens: undefined, prefixGroups: undefined, router: 'least-load,round-robin', routerCandidates: '2' }).routers).toEqual({ routers: ['least-load', 'round-robin'], candidates: 2 });
    expect(plain.workloadFlags).toBe('--prompt-tokens 4200 --output-tokens 64');
    expect(resolvePlanOptions(flags).workloadFlags).toBe('--prompt-tokens 4200 --output-tokens 64 --prefix-tokens 4096 --prefix-groups 256');
  }, 120_000);

  it('bad --router values: one line, exit 2', async () => {
    const bad = await runCli(['plan', '--model', 'Qwen2-7B-Instruct', '--rate', '5', '--slo', 'ttft:1000', '--router', 'random']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--router/);
    expect(bad.stderr).toMatch(/round-robin, least-load, prefix-aware/);
    const lonely = await runCli(['plan', '--model', 'Qwen2-7B-Instruct', '--rate', '5', '--slo', 'ttft:1000', '--router-candidates', '2']);
    expect(lonely.code).toBe(2);
    expect(lonely.stderr).toMatch(/--router-candidates goes with routers to compare/);
    const groups = await runCli(['plan', '--model', 'Qwen2-7B-Instruct', '--rate', '5', '--slo', 'ttft:1000', '--prefix-groups', '4']);
    expect(groups.code).toBe(2);
    expect(groups.stderr).toMatch(/--prefix-groups needs --prefix-tokens/);
    for (const r of [bad, lonely, groups]) expect(r.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);
});

describe('lengths-only shared prefixes (predict, plan)', () => {
  it('draw the groups run draws for the same seed; their block hashes share exactly the prefix', async () => {
    const prefix = { tokens: 200, groups: 5 };
    const run = await createWorkload({ kind: 'synthetic', prompt: { kind: 'fixed', value: 300 }, output: { kind: 'fixed', value: 4 }, prefix }, { tokenizer: await loadApproxTokenizer(), seed: 9 });
    const lengths = createLengthsWorkload({ kind: 'fixed', value: 300 }, { kind: 'fixed', value: 4 }, 9, undefined, prefix);
    expect(lengths.sharesPrefixes).toBe(true);
    for (let i = 0; i < 40; i++) {
      expect(lengths.item(i).prefixGroup).toBe(run.item(i).prefixGroup);
      expect(lengths.item(i).promptTokens).toBe(300);
      expect(lengths.item(i).prefixTokens).toBe(201);
    }
    const a = prefixBlockHashes(lengths.item(0), 0) as number[];
    const j = Array.from({ length: 40 }, (_, i) => i).find((i) => i > 0 && lengths.item(i).prefixGroup === lengths.item(0).prefixGroup) as number;
    const k = Array.from({ length: 40 }, (_, i) => i).find((i) => lengths.item(i).prefixGroup !== lengths.item(0).prefixGroup) as number;
    const b = prefixBlockHashes(lengths.item(j), j) as number[];
    const c = prefixBlockHashes(lengths.item(k), k) as number[];
    expect(a).toHaveLength(Math.floor(300 / 16));
    // 201 shared tokens: 12 full blocks in common with the same group, none with another, none after them.
    const common = (x: number[], y: number[]): number => x.findIndex((h, i) => h !== y[i]);
    expect(common(a, b)).toBe(12);
    expect(common(a, c)).toBe(0);
    expect(a.slice(12).some((h) => b.includes(h))).toBe(false);
    expect(prefixBlockHashes(lengths.item(0), 0)).toEqual(a);
    expect(prefixBlockHashes(createLengthsWorkload({ kind: 'fixed', value: 300 }, { kind: 'fixed', value: 4 }, 9).item(0), 0)).toBeUndefined();
  });
});
