import { describe, expect, it } from 'vitest';
import { rankCapacity } from '../../src/report/capacity-rank.js';
import { mismatchText, runMismatches } from '../../src/report/comparability.js';
import { seriesNames } from '../../src/report/series.js';
import { capacityRun } from './capacity-runs.js';

// Three deployments of one model, searched on the rate axis to ±5%.
const big = capacityRun({ id: 'aaaa0001', engine: 'vllm', gpu: 'H100', gpus: 8, probes: [[2, true], [4, true], [8, true], [16, true], [32, false], [24, false], [20, true], [22, false], [21, true]] });
const small = capacityRun({ id: 'aaaa0002', engine: 'sglang', gpu: 'H100', gpus: 2, probes: [[1, true], [2, true], [4, true], [8, true], [16, false], [12, false], [10, true], [11, false], [10.5, true]] });
const none = capacityRun({ id: 'aaaa0003', engine: 'tgi', gpu: 'L40S', gpus: 1, probes: [[0.4, false]] });

describe('capacity ranking (compare of capacity runs)', () => {
  it('orders by capacity and ranks per GPU and per dollar with the figures it defines', () => {
    const runs = [small, none, big];
    const ranking = rankCapacity(runs, seriesNames(runs), { gpuHourPrice: 2 });
    expect(ranking).toBeDefined();
    const e = ranking?.entries ?? [];
    expect(e.map((x) => x.runId)).toEqual(['aaaa0001', 'aaaa0002', 'aaaa0003']);
    expect(e.map((x) => x.rank)).toEqual([1, 2, 3]);
    // 21 req/s on 8 GPUs = 2.625 per GPU; 10.5 on 2 = 5.25: the small deployment leads per GPU.
    expect(e[0]?.capacityPerGpu).toBeCloseTo(2.625, 9);
    expect(e[1]?.capacityPerGpu).toBeCloseTo(5.25, 9);
    expect(e.map((x) => x.rankPerGpu)).toEqual([2, 1, null]);
    // Requests per $: 21 req/s × 3600 s ÷ ($2 × 8 GPUs) = 4725; 10.5 × 3600 ÷ ($2 × 2) = 9450.
    expect(e[0]?.requestsPerDollar).toBeCloseTo(4725, 6);
    expect(e[1]?.requestsPerDollar).toBeCloseTo(9450, 6);
    expect(e.map((x) => x.rankPerDollar)).toEqual([2, 1, null]);
    expect(e[2]?.feasibleMax).toBeNull();

    const [head, ...rows] = [ranking?.table.headers ?? [], ...(ranking?.table.rows ?? [])];
    expect(head).toEqual(['Rank', 'Run', 'Engine', 'GPUs', 'Capacity', 'First failure', 'Capacity per GPU (rank)', 'Requests per $ at capacity (at $2/GPU-hour) (rank)']);
    expect(rows[0]).toEqual(['1', 'vllm · 8×H100', 'vllm', '8× H100', '21.00 req/s (+4.8% to the first failure; no load run twice)', '22.00 req/s', '2.63 req/s (#2)', '4,725 (#2)']);
    expect(rows[1]).toEqual(['2', 'sglang · 2×H100', 'sglang', '2× H100', '10.50 req/s (+4.8% to the first failure; no load run twice)', '11.00 req/s', '5.25 req/s (#1)', '9,450 (#1)']);
    expect(rows[2]?.slice(0, 7)).toEqual(['3', 'tgi · 1×L40S', 'tgi', '1× L40S', 'none (even 0.40 req/s failed)', '0.40 req/s', '—']);

    const text = ranking?.lines.join('\n') ?? '';
    expect(text).toContain('All runs: capacity = the highest load on the rate (req/s) axis at which 99% of requests met ttft ≤ 300 ms (= p99 within each limit');
    expect(text).toContain('Highest capacity: vllm · 8×H100 — 21.00 req/s, +100.0% over sglang · 2×H100 (10.50 req/s).');
    expect(text).toContain('Most capacity per GPU: sglang · 2×H100 — 5.25 req/s per GPU (next: vllm · 8×H100 at 2.63 req/s per GPU).');
    expect(text).toContain('Most requests per $: sglang · 2×H100 — 9,450 requests per $ at capacity (next: vllm · 8×H100 at 4,725).');
    expect(text).toContain('Even the lowest load failed the SLO for tgi · 1×L40S (ranked last).');
    expect(text).not.toContain('not settled');
  });

  it("prints each capacity's measured precision (its bracket, settled, repeats), not the search step ±5%", () => {
    const probes: Array<[number, boolean]> = [[4, true], [8, true], [9, true], [10, false]];
    const agreed = capacityRun({ id: 'cccc0001', engine: 'vllm', gpu: 'H100', probes,
      capacity: { reproducibility: { repeatedLoads: 2, agreed: 2, loads: [], text: '' } } });
    const split = capacityRun({ id: 'cccc0002', engine: 'sglang', gpu: 'H100', probes: [[4, true], [8, true], [8.5, true], [9.2, false]],
      capacity: { settled: false, reproducibility: { repeatedLoads: 3, agreed: 2, loads: [], text: '' } } });
    const predicted = capacityRun({ id: 'cccc0003', engine: 'tgi', gpu: 'H100', probes: [[4, true], [6, true], [6.3, false]], predicted: true });
    const runs = [agreed, split, predicted];
    const cells = rankCapacity(runs, seriesNames(runs), {})?.table.rows.map((r) => r[4]);
    expect(cells).toEqual([
      '9.00 req/s (+11.1% to the first failure; repeats agreed at 2 loads)',
      '8.50 req/s (+8.2% to the first failure; not settled: a lower load failed; repeats disagreed at 1 load)',
      '6.00 req/s (+5.0% to the first failure; virtual time: repeats exactly)',
    ]);
    for (const c of cells ?? []) expect(c).not.toContain('±');
  });

  it('says when two capacities lie within the search precision, and when a search hit its ceiling', () => {
    const a = capacityRun({ id: 'bbbb0001', engine: 'vllm', gpu: 'A100-80GB', gpus: 1, probes: [[4, true], [8, true], [9, true], [10, false]] });
    const b = capacityRun({ id: 'bbbb0002', engine: 'sglang', gpu: 'A100-80GB', gpus: 1, probes: [[4, true], [8, true], [8.5, true], [9.4, false]] });
    const c = capacityRun({ id: 'bbbb0003', engine: 'lmdeploy', gpu: 'A100-80GB', probes: [[4, true], [8, true]] });
    const runs = [a, b, c];
    const ranking = rankCapacity(runs, seriesNames(runs), {});
    const text = ranking?.lines.join('\n') ?? '';
    // c never failed: 8 req/s is a lower bound; a's bracket [9, 10) and b's [8.5, 9.4) overlap.
    expect(ranking?.entries.map((e) => e.runId)).toEqual(['bbbb0001', 'bbbb0002', 'bbbb0003']);
    expect(text).toContain('(brackets [9.00 req/s, 10.00 req/s) and [8.50 req/s, 9.40 req/s) overlap): their order is not settled');
    expect(text).toContain('No load failed for lmdeploy · 1×A100-80GB: the search hit its ceiling, so the capacity is a lower bound.');
    expect(text).toContain('Add --gpu-hour-price USD for the requests served per dollar at capacity.');
    expect(ranking?.table.rows[2]?.[4]).toBe('≥ 8.00 req/s (no load failed)');
    expect(ranking?.table.rows[2]?.[3]).toBe('1× A100-80GB (count not recorded: 1 assumed)');
    expect(ranking?.table.headers).not.toContain('Requests per $ at capacity (at $2/GPU-hour) (rank)');
  });

  it('on the concurrency axis, reads requests per $ from the achieved rate of the passing probes at capacity', () => {
    const a = capacityRun({ id: 'cccc0001', engine: 'vllm', gpu: 'H100', gpus: 1, axis: 'concurrency', probes: [[1, true, 0.5], [2, true, 1], [4, true, 1.9], [8, false, 2.4], [6, true, 2.6], [7, false, 2.5]] });
    const b = capacityRun({ id: 'cccc0002', engine: 'sglang', gpu: 'H100', gpus: 2, axis: 'concurrency', probes: [[1, true, 0.6], [2, true, 1.2], [4, true, 2.2], [8, true, 4], [16, false, 5], [12, false, 4.6], [10, true, 4.5], [11, false, 4.5]] });
    const runs = [a, b];
    const ranking = rankCapacity(runs, seriesNames(runs), { gpuHourPrice: 3 });
    const [top, next] = ranking?.entries ?? [];
    expect(top?.runId).toBe('cccc0002');
    expect(top?.requestsPerSAtCapacity).toBeCloseTo(4.5, 9);
    // 4.5 req/s × 3600 ÷ ($3 × 2 GPUs) = 2700; 2.6 × 3600 ÷ ($3 × 1) = 3120.
    expect(top?.requestsPerDollar).toBeCloseTo(2700, 6);
    expect(next?.requestsPerDollar).toBeCloseTo(3120, 6);
    expect(ranking?.table.headers).toContain('req/s at capacity');
    expect(ranking?.table.rows[0]?.[4]).toBe('10 streams (11 streams failed; no load run twice)');
    expect(ranking?.table.rows[0]?.[6]).toBe('5.00 streams (#2)');
  });

  it('prices each run by its own GPU with per-GPU prices, so the per-dollar rank can differ from the per-GPU rank', () => {
    // 8.40 req/s on one H100 and 7.60 on one A100 recorded under an alias; one run recorded no GPU, one a GPU not listed.
    const h100 = capacityRun({ id: 'ffff0001', engine: 'tgi', gpu: 'H100', gpus: 1, probes: [[4, true], [8, true], [8.4, true], [8.8, false]] });
    const a100 = capacityRun({ id: 'ffff0002', engine: 'vllm', gpu: 'A100-SXM4-80GB', gpus: 1, probes: [[4, true], [7.6, true], [8, false]] });
    const bare = capacityRun({ id: 'ffff0003', engine: 'sglang', gpus: 1, probes: [[4, true], [6, true], [7, false]] });
    const l40s = capacityRun({ id: 'ffff0004', engine: 'lmdeploy', gpu: 'L40S', gpus: 1, probes: [[2, true], [3, false]] });
    const runs = [h100, a100, bare, l40s];
    const names = seriesNames(runs);

    // One price for every run: per $ is per GPU scaled, the same order.
    const flat = rankCapacity(runs, names, { gpuHourPrice: 2 });
    expect(flat?.entries.map((e) => [e.runId, e.rankPerGpu, e.rankPerDollar])).toEqual([
      ['ffff0001', 1, 1],
      ['ffff0002', 2, 2],
      ['ffff0003', 3, 3],
      ['ffff0004', 4, 4],
    ]);

    const ranking = rankCapacity(runs, names, { gpuHourPrices: { H100: 2.49, 'A100-80GB': 1.79 } });
    const e = ranking?.entries ?? [];
    expect(e.map((x) => x.runId)).toEqual(['ffff0001', 'ffff0002', 'ffff0003', 'ffff0004']);
    expect(e.map((x) => x.gpuHourPrice)).toEqual([2.49, 1.79, null, null]);
    // 8.4 × 3600 ÷ 2.49 = 12,144.58; 7.6 × 3600 ÷ 1.79 = 15,284.92: the A100 leads per dollar, the H100 per GPU.
    expect(e[0]?.requestsPerDollar).toBeCloseTo(12144.578313, 5);
    expect(e[1]?.requestsPerDollar).toBeCloseTo(15284.916201, 5);
    expect(e.map((x) => x.rankPerGpu)).toEqual([1, 2, 3, 4]);
    expect(e.map((x) => x.rankPerDollar)).toEqual([2, 1, null, null]);

    const t = ranking?.table;
    expect(t?.headers[7]).toBe("Requests per $ at capacity (at each run's GPU-hour price: H100 $2.49, A100-80GB $1.79) (rank)");
    expect(t?.rows.map((r) => r[7])).toEqual(['12,145 (#2)', '15,285 (#1)', '— (no GPU recorded)', '— (no price for L40S)']);
    const text = ranking?.lines.join('\n') ?? '';
    expect(text).toContain(`Most requests per $: ${names[1]} — 15,285 requests per $ at capacity (next: ${names[0]} at 12,145).`);
    expect(text).toContain("Requests per $ = requests served in one hour at capacity ÷ (the run's GPU-hour price × the run's GPUs), at each run's GPU-hour price: H100 $2.49, A100-80GB $1.79.");
    expect(ranking?.lines).toContain(`No GPU-hour price for ${names[2]}: the run recorded no GPU (record it with --gpu NAME), so it gets no cost; one --gpu-hour-price USD prices every run alike.`);
    expect(ranking?.lines).toContain(`No GPU-hour price for ${names[3]} (GPU L40S): it gets no cost; add L40S=USD to --gpu-hour-price.`);
  });

  it('needs two capacity runs, and leaves other runs out saying so', () => {
    expect(rankCapacity([big], ['x'], {})).toBeUndefined();
    const sweep = { ...small, id: 'dddd0001', summary: { ...small.summary } };
    delete sweep.summary.capacity;
    expect(rankCapacity([big, sweep], ['a', 'b'], {})).toBeUndefined();
    const three = rankCapacity([big, small, sweep], ['a', 'b', 'c'], {});
    expect(three?.lines).toContain('1 run is not a capacity run and is left out of the ranking.');
  });

  it('treats capacities under other SLOs, attainment targets, error limits or axes as not comparable', () => {
    const base = { engine: 'vllm', gpu: 'H100', gpus: 1, probes: [[4, true], [8, false]] as Array<[number, boolean]> };
    const a = capacityRun({ id: 'eeee0001', ...base });
    const cases = [
      [capacityRun({ id: 'eeee0002', ...base, slo: { ttftMs: 500 } }), 'capacity SLO: ttft ≤ 300 ms (run eeee0001) vs ttft ≤ 500 ms (run eeee0002)'],
      [capacityRun({ id: 'eeee0003', ...base, attainment: 95 }), 'attainment target: 99% of requests (run eeee0001) vs 95% of requests (run eeee0003)'],
      [capacityRun({ id: 'eeee0004', ...base, maxErrorShare: 0.05 }), 'error limit: at most 1% failed (run eeee0001) vs at most 5% failed (run eeee0004)'],
      [capacityRun({ id: 'eeee0005', ...base, axis: 'concurrency' }), 'capacity axis: rate (req/s) (run eeee0001) vs concurrency (streams) (run eeee0005)'],
    ] as const;
    for (const [other, text] of cases) {
      expect(runMismatches([a, other]).map(mismatchText)).toEqual([text]);
      const ranking = rankCapacity([a, other], ['a', 'b'], {});
      expect(ranking?.lines[0]).toMatch(/^WARNING: the capacities were measured under different terms/);
    }
    expect(runMismatches([a, capacityRun({ id: 'eeee0006', ...base, engine: 'sglang', gpus: 4 })])).toEqual([]);
  });
});
