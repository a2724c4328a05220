import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CapacityResult } from '../../src/load/capacity-types.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import { runCli } from '../helpers/cli.js';

/**
 * `compare --gpu-hour-price H100=2.49,A100-80GB=1.79`: capacity runs on different GPUs, each priced by its own GPU.
 * The runs are real capacity searches in virtual time (`predict --profile capacity`).
 */
let root: string;
const runs = { h100: '', a100: '', l40s: '' };
const SERIES = { h100: 'tgi · 1×H100 · fp16 (predicted)', a100: 'vllm-v1 · 1×A100-80GB · fp16 (predicted)', l40s: 'vllm-v1 · 1×L40S · fp16 (predicted)' };

interface Saved {
  capacity: CapacityResult;
  stages: StageSummary[];
}
const saved = (dir: string): Saved => JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as Saved;
const thousands = (n: number): string => n.toLocaleString('en-US', { maximumFractionDigits: 0 });
/** The verdict's figure without --slo: the highest output rate over rows with completions. */
const peakTokens = (s: Saved): number => Math.max(...s.stages.filter((r) => r.requests.ok > 0 && r.requestThroughput > 0).map((r) => r.outputTokenThroughput));

const oneLineError = (stderr: string): string => {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0] ?? '';
};

/** The cells of the markdown table row whose Run cell is `series`, under the heading `section`. */
function rowOf(md: string, section: string, series: string): string[] {
  const part = md.slice(md.indexOf(section));
  const line = part.split('\n').find((l) => l.split('|')[2]?.trim() === series || l.split('|')[1]?.trim() === series);
  return (line ?? '').split('|').slice(1, -1).map((c) => c.trim());
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ib-compare-prices-'));
  const predict = async (name: keyof typeof runs, args: string[]): Promise<void> => {
    const out = join(root, name);
    const r = await runCli(['predict', '--profile', 'capacity', '--slo', 'ttft:300', ...args, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    runs[name] = out;
  };
  await Promise.all([predict('h100', ['--engine', 'tgi', '--gpu', 'H100']), predict('a100', ['--gpu', 'A100-80GB']), predict('l40s', ['--gpu', 'L40S'])]);
}, 120_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('compare of capacity runs on different GPUs, priced per GPU', () => {
  it('ranks per dollar at each run’s own GPU-hour price, which reorders the per-GPU ranking', async () => {
    const h = saved(runs.h100);
    const a = saved(runs.a100);
    const capH = h.capacity.feasibleMax as number;
    const capA = a.capacity.feasibleMax as number;
    // The premise: the H100 run holds more load per GPU, by less than the H100's price premium (2.49 / 1.79).
    expect(capH).toBeGreaterThan(capA);
    expect(capH / capA).toBeLessThan(2.49 / 1.79);

    // One price for every run: the per-dollar order is the per-GPU order, and the wording is as before.
    const flat = await runCli(['compare', runs.h100, runs.a100, '--gpu-hour-price', '2', '--format', 'md,json', '--out', join(root, 'flat')]);
    expect(flat.code, flat.stderr).toBe(0);
    expect(flat.stdout).toContain('| Requests per $ at capacity (at $2/GPU-hour) (rank) |');
    expect(rowOf(flat.stdout, '## Capacity ranking', SERIES.h100).slice(-2)).toEqual([`${capH.toFixed(2)} req/s (#1)`, `${thousands((capH * 3600) / 2)} (#1)`]);
    expect(flat.stdout).toContain("Requests per $ = requests served in one hour at capacity ÷ ($2 per GPU-hour × the run's GPUs).");
    const flatJson = JSON.parse(readFileSync(join(root, 'flat', 'compare.json'), 'utf8')) as { gpuHourPrice: number; gpuHourPrices: { unit: string; everyRun: number; perGpu: null } };
    expect(flatJson.gpuHourPrice).toBe(2);
    expect(flatJson.gpuHourPrices).toMatchObject({ unit: 'USD per GPU-hour', everyRun: 2, perGpu: null });

    // Per-GPU prices (an alias for the A100): the A100 run serves more requests per dollar.
    const out = join(root, 'per-gpu');
    const r = await runCli(['compare', runs.h100, runs.a100, '--gpu-hour-price', 'H100=2.49,A100-SXM4-80GB=1.79', '--format', 'md,json,csv', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const perDollarH = (capH * 3600) / 2.49;
    const perDollarA = (capA * 3600) / 1.79;
    expect(r.stdout).toContain("| Requests per $ at capacity (at each run's GPU-hour price: H100 $2.49, A100-80GB $1.79) (rank) |");
    expect(rowOf(r.stdout, '## Capacity ranking', SERIES.h100).slice(-2)).toEqual([`${capH.toFixed(2)} req/s (#1)`, `${thousands(perDollarH)} (#2)`]);
    expect(rowOf(r.stdout, '## Capacity ranking', SERIES.a100).slice(-2)).toEqual([`${capA.toFixed(2)} req/s (#2)`, `${thousands(perDollarA)} (#1)`]);
    expect(r.stdout).toContain(`- Most capacity per GPU: ${SERIES.h100} — ${capH.toFixed(2)} req/s per GPU`);
    expect(r.stdout).toContain(`- Most requests per $: ${SERIES.a100} — ${thousands(perDollarA)} requests per $ at capacity (next: ${SERIES.h100} at ${thousands(perDollarH)}).`);
    expect(r.stdout).toContain("÷ (the run's GPU-hour price × the run's GPUs), at each run's GPU-hour price: H100 $2.49, A100-80GB $1.79.");

    // The verdict's cost per 1M output tokens reads each run's price too: price × 1e6 ÷ (tok/s × 3600).
    const costH = (2.49 * 1e6) / (peakTokens(h) * 3600);
    const costA = (1.79 * 1e6) / (peakTokens(a) * 3600);
    // The J per 1M output tokens column follows (predicted runs carry the simulator's energy): the $ cell is second to last.
    expect(rowOf(r.stdout, '## Verdict', SERIES.h100).at(-2)).toBe(`$${costH.toFixed(3)} (1 GPU at $2.49/GPU-hour)`);
    expect(rowOf(r.stdout, '## Verdict', SERIES.a100).at(-2)).toBe(`$${costA.toFixed(3)} (1 GPU at $1.79/GPU-hour)`);
    expect(r.stdout).toContain("$ per 1M output tokens at saturation (at each run's GPU-hour price: H100 $2.49, A100-80GB $1.79)");

    type Json = {
      gpuHourPrice: null;
      gpuHourPrices: { unit: string; everyRun: null; perGpu: Record<string, number>; runs: { series: string; gpu: string; gpuHourPrice: number }[] };
      capacityRanking: { entries: { series: string; gpuHourPrice: number; requestsPerDollar: number; rankPerGpu: number; rankPerDollar: number }[] };
      verdict: { runs: { series: string; gpuHourPrice: number; costPerMillion: number }[] };
    };
    const json = JSON.parse(readFileSync(join(out, 'compare.json'), 'utf8')) as Json;
    expect(json.gpuHourPrice).toBeNull();
    expect(json.gpuHourPrices).toEqual({
      unit: 'USD per GPU-hour',
      everyRun: null,
      perGpu: { H100: 2.49, 'A100-80GB': 1.79 },
      runs: [
        { runId: expect.any(String), series: SERIES.h100, gpu: 'H100', gpuHourPrice: 2.49 },
        { runId: expect.any(String), series: SERIES.a100, gpu: 'A100-80GB', gpuHourPrice: 1.79 },
      ],
    });
    const [first, second] = json.capacityRanking.entries;
    expect([first?.series, first?.gpuHourPrice, first?.rankPerGpu, first?.rankPerDollar]).toEqual([SERIES.h100, 2.49, 1, 2]);
    expect([second?.series, second?.gpuHourPrice, second?.rankPerGpu, second?.rankPerDollar]).toEqual([SERIES.a100, 1.79, 2, 1]);
    expect(first?.requestsPerDollar).toBeCloseTo(perDollarH, 6);
    expect(second?.requestsPerDollar).toBeCloseTo(perDollarA, 6);
    expect(json.verdict.runs.map((v) => v.gpuHourPrice)).toEqual([2.49, 1.79]);
    expect(json.verdict.runs[0]?.costPerMillion).toBeCloseTo(costH, 9);
    const csv = readFileSync(join(out, 'capacity-ranking.csv'), 'utf8').trim().split('\n').map((l) => l.split(','));
    const head = csv[0] as string[];
    const a100 = csv.find((r) => r[head.indexOf('gpu')] === 'A100-80GB') as string[];
    expect(Number(a100[head.indexOf('requests_per_usd')])).toBeCloseTo(perDollarA, 3);
    expect(a100[head.indexOf('rank_per_usd')]).toBe('1');
  }, 60_000);

  it('gives a run whose GPU has no price no cost, and says what to pass', async () => {
    const r = await runCli(['compare', runs.h100, runs.a100, runs.l40s, '--gpu-hour-price', 'H100=2.49,A100-80GB=1.79', '--format', 'md', '--out', join(root, 'missing')]);
    expect(r.code, r.stderr).toBe(0);
    expect(rowOf(r.stdout, '## Capacity ranking', SERIES.l40s).at(-1)).toBe('— (no price for L40S)');
    expect(rowOf(r.stdout, '## Verdict', SERIES.l40s).at(-2)).toBe('— (no price for L40S)');
    const line = `- No GPU-hour price for ${SERIES.l40s} (GPU L40S): it gets no cost; add L40S=USD to --gpu-hour-price.`;
    // Under the ranking and under the verdict.
    expect(r.stdout.split('\n').filter((l) => l === line)).toHaveLength(2);
  }, 60_000);

  it('prices grid runs by their own GPU too (the verdict\'s best cell)', async () => {
    const grids = await Promise.all(
      ['H100', 'A100-80GB'].map(async (gpu) => {
        const dir = join(root, `grid-${gpu}`);
        const p = await runCli(['predict', '--profile', 'grid', '--input-lens', '128,512', '--output-lens', '128', '--num-prompts', '30', '--gpu', gpu, '--out', dir]);
        expect(p.code, p.stderr).toBe(0);
        return dir;
      }),
    );
    const r = await runCli(['compare', ...grids, '--gpu-hour-price', 'H100=2.49,A100-80GB=1.79', '--format', 'md', '--out', join(root, 'grid')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("$ per 1M output tokens, best cell (at each run's GPU-hour price: H100 $2.49, A100-80GB $1.79)");
    // The best cell is the busiest throughput (burst) row of any cell.
    const best = (dir: string): number => Math.max(...saved(dir).stages.filter((s) => (s.grid?.role ?? 'throughput') === 'throughput' && s.requests.ok > 0).map((s) => s.outputTokenThroughput));
    for (const [dir, price, series] of [[grids[0], 2.49, 'vllm-v1 · 1×H100 · fp16 (predicted)'], [grids[1], 1.79, 'vllm-v1 · 1×A100-80GB · fp16 (predicted)']] as const) {
      const cost = (price * 1e6) / (best(dir as string) * 3600);
      expect(rowOf(r.stdout, '## Verdict', series).at(-1)).toBe(`$${cost.toFixed(3)} (1 GPU at $${price}/GPU-hour)`);
    }
  }, 60_000);

  it('reads --prices FILE (the flag wins over it) and refuses bad price lists in one line, exit 2', async () => {
    const file = join(root, 'prices.json');
    writeFileSync(file, JSON.stringify({ H100: 9, 'A100-80GB': 1.79 }));
    const r = await runCli(['compare', runs.h100, runs.a100, '--prices', file, '--gpu-hour-price', 'h100-sxm=2.49', '--format', 'json', '--out', join(root, 'file')]);
    expect(r.code, r.stderr).toBe(0);
    const json = JSON.parse(readFileSync(join(root, 'file', 'compare.json'), 'utf8')) as { gpuHourPrices: { perGpu: Record<string, number> } };
    expect(json.gpuHourPrices.perGpu).toEqual({ H100: 2.49, 'A100-80GB': 1.79 });

    const cases: Array<[string[], RegExp]> = [
      [['--gpu-hour-price', 'H100=2.49,B300=9'], /^error: --gpu-hour-price: unknown GPU "B300"/],
      [['--gpu-hour-price', 'H100=free'], /--gpu-hour-price: the price of H100 must be a number of USD > 0/],
      [['--gpu-hour-price', 'H100=2.49,A100'], /--gpu-hour-price "A100" is not GPU=USD/],
      [['--gpu-hour-price', 'cheap'], /--gpu-hour-price "cheap" is not a number > 0; give one USD price for every run .* or one per GPU \(--gpu-hour-price H100=2.49,A100-80GB=1.79\)/],
      [['--gpu-hour-price', '2', '--prices', file], /--gpu-hour-price 2 is one price for every run, but --prices .* prices each GPU/],
      [['--prices', join(root, 'absent.json')], /--prices .*absent.json: no such file/],
    ];
    for (const [args, message] of cases) {
      const bad = await runCli(['compare', runs.h100, runs.a100, ...args, '--format', 'md', '--out', join(root, 'never')]);
      expect(bad.code, args.join(' ')).toBe(2);
      expect(oneLineError(bad.stderr)).toMatch(message);
    }
  }, 120_000);
});
