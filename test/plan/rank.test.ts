import { describe, expect, it } from 'vitest';
import { costPerMillionTokens, rankCandidates } from '../../src/plan/rank.js';
import type { SearchedCandidate } from '../../src/plan/search.js';
import type { EvaluatedCapacity, LoadPoint } from '../../src/plan/types.js';

const point = (over: Partial<LoadPoint> = {}): LoadPoint => ({
  ratePerReplica: 1, attainment: 100, meanTtftMs: 100, p99TtftMs: 150, meanItlMs: 20, p99ItlMs: 25,
  outputTokensPerSPerUser: 50, outputTokensPerSPerGpu: 100, meetsSlo: true, ...over,
});
const evaluated = (capacity: number | null, replicas: number, over: Partial<EvaluatedCapacity> = {}): EvaluatedCapacity => ({
  capacityPerReplica: capacity, firstBreach: null, probes: 6, verdict: 'capacity: …', elapsedMs: 10,
  ...(capacity !== null ? { replicas, atLoad: point(), atCapacity: point() } : {}), ...over,
});
const desc = { maxNumSeqs: 256, maxModelLen: 32768, kvTokens: 100_000 } as SearchedCandidate['description'];

function cand(index: number, gpu: string, gpus: number, price: number, extra: Partial<SearchedCandidate>): SearchedCandidate {
  return { index, shape: { gpu, gpus, quant: 'awq', engine: 'vllm' }, gpuHourPrice: price, replicaCostPerHour: price * gpus, description: desc, ...extra };
}

describe('ranking', () => {
  const ctx = { model: 'Qwen2-72B-Instruct', rate: 5, meanOutputTokens: 128 };
  const searched: SearchedCandidate[] = [
    cand(0, 'A100-40GB', 1, 1.29, { skipped: 'does not fit' }),
    cand(1, 'H100', 2, 2.49, { evaluated: evaluated(2, 3) }), // $14.94/h
    cand(2, 'L40S', 1, 0.99, { evaluated: evaluated(0.3, 17) }), // $16.83/h
    cand(3, 'H200', 4, 3.49, { pruned: 'one replica costs more' }),
    cand(4, 'L20-48GB', 1, 0.79, { evaluated: evaluated(null, 0) }),
    cand(5, 'H100', 1, 2.49, { evaluated: evaluated(1.26, 4) }), // $9.96/h
    cand(6, 'A100-80GB', 2, 1.79, { evaluated: evaluated(1.8, 3, { atLoad: point({ meetsSlo: false, missed: '97.0% of requests met the limits (99% needed)' }) }) }),
    cand(7, 'H100', 1, 2.49, { evaluated: evaluated(1.3, 4) }), // $9.96/h with more headroom than #5
  ];
  const ranked = rankCandidates(searched, ctx);

  it('puts feasible first, cheapest first; then SLO misses, pruned, and what cannot run', () => {
    expect(ranked.map((c) => c.status)).toEqual(['feasible', 'feasible', 'feasible', 'feasible', 'slo-unmet', 'slo-unmet', 'pruned', 'skipped']);
    expect(ranked.slice(0, 4).map((c) => [c.rank, c.gpu, c.gpus, c.costPerHour])).toEqual([
      [1, 'H100', 1, 2.49 * 4],
      [2, 'H100', 1, 2.49 * 4],
      [3, 'H100', 2, 2.49 * 2 * 3],
      [4, 'L40S', 1, 0.99 * 17],
    ]);
    // At equal cost and GPUs, the one with more capacity over the load ranks first.
    expect(ranked[0]?.capacityPerReplica).toBe(1.3);
    expect(ranked.slice(4).every((c) => c.rank === undefined && !c.feasible && c.reason)).toBe(true);
    expect(ranked[5]?.reason).toMatch(/at its share of the load .* missed the SLO: 97.0% of requests met/);
  });

  it('costs the required load: replicas × GPUs × price, per 1M output tokens, tokens per GPU', () => {
    const top = ranked[0];
    expect(top?.totalGpus).toBe(4);
    expect(top?.costPerMillionOutputTokens).toBeCloseTo(((2.49 * 4) / (5 * 128 * 3600)) * 1e6, 9);
    expect(top?.tokensPerSecondPerGpu).toBeCloseTo((5 * 128) / 4, 9);
    expect(top?.tokensPerSecondPerUser).toBe(50);
    expect(top?.launch).toMatch(/^vllm serve Qwen\/Qwen2-72B-Instruct-AWQ --tensor-parallel-size 1/);
    expect(costPerMillionTokens(3.6, 1)).toBeCloseTo(1e6 * 0.001, 9);
  });

  it('keeps the JSON field names of the contract', () => {
    for (const c of ranked) {
      for (const key of ['gpu', 'gpus', 'quant', 'engine', 'replicas', 'feasible', 'reason', 'capacityPerReplica', 'costPerHour', 'costPerMillionOutputTokens', 'tokensPerSecondPerGpu', 'tokensPerSecondPerUser', 'status', 'totalGpus', 'gpuHourPrice']) {
        expect(c).toHaveProperty(key);
      }
    }
  });
});
