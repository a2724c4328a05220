/**
 * The capacity ranking of servers that ran on a CPU (issue 51 item 12g): `matrix` over llama-server processes on a
 * CPU printed `1× GPU (count not recorded: 1 assumed)` for each, beside a `Capacity per GPU` column.
 */
import { describe, expect, it } from 'vitest';
import { rankCapacity, renderCapacityRankingCsv } from '../../src/report/capacity-rank.js';
import { capacityRun } from './capacity-runs.js';

const probes = (cap: number): Array<[number, boolean]> => [[1, true], [cap, true], [cap + 1, false]];

describe('capacity ranking of CPU servers', () => {
  it('a run that recorded no hardware (a llama-server on a CPU) is "not recorded", with no per-GPU column', () => {
    // What a real llama-server run records: the engine, no --gpu, no --gpus (matrix cells of --parallel 1, 2, 4).
    const runs = [1, 2, 4].map((n) => capacityRun({ id: `llam000${n}`, engine: 'llamacpp', axis: 'concurrency', probes: probes(n) }));
    const ranking = rankCapacity(runs, ['p1', 'p2', 'p4'], {});
    expect(ranking?.table.headers).toEqual(['Rank', 'Run', 'Engine', 'Hardware', 'Capacity', 'First failure', 'req/s at capacity']);
    for (const row of ranking?.table.rows ?? []) expect(row[3]).toBe('not recorded');
    expect(ranking?.entries.map((e) => [e.hardware, e.capacityPerGpu, e.rankPerGpu, e.gpusAssumed])).toEqual([
      ['unrecorded', null, null, false], ['unrecorded', null, null, false], ['unrecorded', null, null, false],
    ]);
    const text = [...(ranking?.table.rows.flat() ?? []), ...(ranking?.lines ?? [])].join('\n');
    expect(text).not.toMatch(/GPU \(count not recorded|per GPU/);
    expect(renderCapacityRankingCsv(ranking as NonNullable<typeof ranking>).split('\n')[1]).toMatch(/^1,llam0004,p4,llamacpp,,1,concurrency,streams,4,5,1,[\d.]+,,,,,$/);
  });

  it('a run on a named CPU says CPU and gets no per-GPU figure; GPU runs beside it keep theirs', () => {
    const epyc = capacityRun({ id: 'cpu00001', engine: 'llamacpp', gpu: 'EPYC-9654', probes: [[1, true], [2, true], [3, false]] });
    const generic = capacityRun({ id: 'cpu00002', engine: 'llamacpp', gpu: 'cpu:1c:20gbs:96gflops:64gib', gpus: 1, probes: [[0.5, true], [1, false]] });
    const h100 = capacityRun({ id: 'gpu00001', engine: 'vllm', gpu: 'H100', gpus: 2, probes: [[4, true], [8, true], [9, false]] });
    const ranking = rankCapacity([epyc, generic, h100], ['epyc', 'generic', 'h100'], {});
    expect(ranking?.table.headers.slice(3, 7)).toEqual(['GPUs', 'Capacity', 'First failure', 'Capacity per GPU (rank)']);
    const rows = Object.fromEntries((ranking?.table.rows ?? []).map((r) => [r[1], r]));
    expect([rows['h100']?.[3], rows['h100']?.[6]]).toEqual(['2× H100', '4.00 req/s (#1)']);
    expect([rows['epyc']?.[3], rows['epyc']?.[6]]).toEqual(['CPU EPYC-9654', '— (a CPU)']);
    expect([rows['generic']?.[3], rows['generic']?.[6]]).toEqual(['CPU cpu:1c:20gbs:96gflops:64gib', '— (a CPU)']);
    expect(ranking?.entries.filter((e) => e.hardware === 'cpu').map((e) => [e.capacityPerGpu, e.rankPerGpu])).toEqual([[null, null], [null, null]]);
  });
});
