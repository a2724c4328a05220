/**
 * `plan` tries prefill/decode splits (issue 34 item 4): the cheapest candidates whose engine disaggregates run as P
 * prefill + D decode engines at the whole required load in virtual time (predict --pd P:D); each split's answer is the
 * fewest copies of it that meet the SLO, candidates rank by their cheapest option, and engines that do not
 * disaggregate are not tried.
 */
import { describe, expect, it } from 'vitest';
import { resolvePlanOptions, type PlanFlags } from '../../src/cli/plan-options.js';
import { runPlan } from '../../src/plan/plan.js';
import { renderPlan } from '../../src/plan/render.js';
import type { PlanResult } from '../../src/plan/types.js';
import { runCli } from '../helpers/cli.js';

// Long prompts on L40S under a tight ITL limit: colocated, every prefill lands in the running decodes' steps and
// pushes their ITL towards the limit; split, the decode engines never run a prefill.
const flags: PlanFlags = {
  model: 'Llama-3.1-8B', rate: '20', promptTokens: '2048', outputTokens: '256', slo: 'ttft:1000,itl:50',
  gpu: 'L40S', tp: '1', quant: 'fp16', engine: 'vllm,tgi', threads: '1', maxSeconds: '3',
};

describe('plan: prefill/decode splits (virtual time, one thread)', () => {
  let plan: PlanResult;

  it('tries every default split on the vLLM candidate: the fewest copies that meet the SLO, ranked by the cheapest option', async () => {
    plan = await runPlan(resolvePlanOptions(flags));
    const pc = plan.pdComparison;
    expect(pc?.splits).toEqual(['1:1', '1:2', '1:3', '2:1']);
    expect(pc?.candidates).toBe(1);
    const vllm = plan.candidates.find((c) => c.engine === 'vllm');
    const tgi = plan.candidates.find((c) => c.engine === 'tgi');
    // TGI serves prefill and decode on one engine: no split is tried for it.
    expect(tgi?.pd).toBeUndefined();
    expect(vllm?.feasible).toBe(true);
    const colocated = vllm?.replicas as number;
    expect(vllm?.pdColocated?.replicas).toBe(colocated);
    const options = vllm?.pd ?? [];
    expect(options.map((o) => o.split)).toEqual(['1:1', '1:2', '1:3', '2:1'].filter((s) => s.split(':').reduce((a, b) => a + Number(b), 0) <= colocated + 2));
    for (const o of options) {
      const [p, d] = o.split.split(':').map(Number) as [number, number];
      // Every deployment tried is a whole number of copies of the ratio, within the plan's engines and two more.
      for (const t of o.tried) {
        expect(t.prefill * d).toBe(t.decode * p);
        expect(t.prefill + t.decode).toBeLessThanOrEqual(colocated + 2);
      }
      if (!o.meetsSlo) {
        expect(o.prefill).toBeNull();
        expect(o.tried.every((t) => !t.meetsSlo)).toBe(true);
        continue;
      }
      const copies = (o.prefill as number) / p;
      expect(o.tried.find((t) => t.prefill === o.prefill)?.meetsSlo).toBe(true);
      // The fewest: one copy fewer was tried and missed (or there is none fewer).
      if (copies > 1) expect(o.tried.find((t) => t.prefill === (copies - 1) * p)?.meetsSlo).toBe(false);
      expect(o.totalGpus).toBe((o.prefill as number) + (o.decode as number));
      expect(o.costPerHour).toBeCloseTo(((o.prefill as number) + (o.decode as number)) * vllm!.gpuHourPrice, 9);
    }
    // Ranked by its cheapest option: a split where one is cheaper than the colocated replicas, else as sized.
    const met = options.filter((o) => o.meetsSlo).map((o) => o.costPerHour as number);
    const cheapest = Math.min(vllm?.costPerHour as number, ...met);
    expect(vllm?.deployment?.costPerHour).toBeCloseTo(cheapest, 9);
    expect(vllm?.deployment?.topology).toBe(met.some((c) => c < (vllm?.costPerHour as number) - 1e-9) ? 'pd' : 'replicas');
    // This workload is the case for disaggregation: 1:1 meets the SLO on fewer GPUs than the colocated replicas.
    const oneOne = options.find((o) => o.split === '1:1');
    expect(oneOne?.meetsSlo).toBe(true);
    expect(oneOne?.totalGpus as number).toBeLessThan(colocated);
    expect(vllm?.deployment).toMatchObject({ topology: 'pd', prefill: expect.any(Number), decode: expect.any(Number) });
    expect(pc?.best?.costPerHour).toBeCloseTo(vllm?.deployment?.costPerHour as number, 9);
    const text = renderPlan(plan, { top: 10, launches: 3, all: false });
    expect(text).toMatch(/^Prefill\/decode splits: the 1 cheapest candidate of an engine that disaggregates \(vllm, sglang, triton, trtllm\) as P prefill \+ D decode engines at 20\.00 req\/s, splits 1:1, 1:2, 1:3, 2:1 .* [\d.]+ s\):$/m);
    expect(text).toMatch(/^ {2}1× L40S fp16 vllm: P\/D 1:1 holds 20 req\/s on \d+ engines \(\d+ prefill \+ \d+ decode\) where colocated replicas need \d+: −\d+% \$\/h/m);
    expect(text).toMatch(/P\/D \d+\+\d+ \$[\d.]+/);
  }, 180_000);

  it('--pd none adds no split fields and leaves the sizing as it was; --pd LIST tries those ratios only', async () => {
    const none = await runPlan(resolvePlanOptions({ ...flags, pd: 'none' }));
    expect(none.pdComparison).toBeUndefined();
    const [a, b] = [plan.candidates.find((c) => c.engine === 'vllm'), none.candidates.find((c) => c.engine === 'vllm')];
    expect(b?.pd).toBeUndefined();
    expect(b?.deployment).toBeUndefined();
    for (const k of ['replicas', 'costPerHour', 'capacityPerReplica', 'costPerMillionOutputTokens'] as const) expect(a?.[k]).toEqual(b?.[k]);
    expect(resolvePlanOptions({ ...flags, pd: '1:3,1:1,1:3', pdCandidates: '2' }).pd).toEqual({ ratios: [{ prefill: 1, decode: 3 }, { prefill: 1, decode: 1 }], candidates: 2 });
  }, 180_000);

  it('bad --pd values: one line, exit 2', async () => {
    for (const args of [['--pd', '0:1'], ['--pd', 'one'], ['--pd', 'none', '--pd-candidates', '2'], ['--pd-candidates', '-1']]) {
      const bad = await runCli(['plan', '--model', 'Qwen2-7B-Instruct', '--rate', '5', '--slo', 'ttft:1000', ...args]);
      expect(bad.code, args.join(' ')).toBe(2);
      expect(bad.stderr.trim().split('\n'), bad.stderr).toHaveLength(1);
      expect(bad.stderr).toMatch(/--pd/);
    }
  }, 120_000);
});
