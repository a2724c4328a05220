import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logTicks } from '../../src/report/charts/axes.js';
import { gridCharts } from '../../src/report/charts/grid.js';
import { specToSvg } from '../../src/report/charts/render.js';
import { sweepCharts } from '../../src/report/charts/specs.js';
import { openRunDir, type StoredRun } from '../../src/store/run-store.js';
import { runCli } from '../helpers/cli.js';

const root = mkdtempSync(join(tmpdir(), 'ib-charts-'));
const LENS = ['128', '512', '1024', '2048'];
let grids: StoredRun[] = [];
let sweep: StoredRun;

/** Every <text> of an SVG, as shown. */
const texts = (svg: string): string[] => [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => (m[1] ?? '').replace(/&amp;/g, '&'));

beforeAll(async () => {
  // The seeds' 4×4 grid, two engines: 32 bars per chart.
  const grid = ['--profile', 'grid', '--input-lens', LENS.join(','), '--output-lens', LENS.join(','), '--num-prompts', '20'];
  const out = (n: string): string => join(root, n);
  const results = await Promise.all([
    runCli(['predict', ...grid, '--engine', 'vllm', '--out', out('vllm')]),
    runCli(['predict', ...grid, '--engine', 'tgi', '--out', out('tgi')]),
    runCli(['predict', '--max-requests', '40', '--sweep-rates', '3', '--out', out('sweep')]),
  ]);
  for (const r of results) expect(r.code, r.stderr).toBe(0);
  grids = [openRunDir(out('vllm')), openRunDir(out('tgi'))];
  sweep = openRunDir(out('sweep'));
}, 60_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('grid charts at the seeds\' 4×4 size', () => {
  it('label every cell (a panel per input length, every output length on its axis) and write each bar\'s value', async () => {
    const charts = gridCharts(grids, ['vllm', 'tgi']);
    expect(charts.map((c) => c.name)).toEqual(['throughput-req', 'throughput-token-out', 'pertoken', 'per-out-token', 'grid-ttft', 'grid-itl']);
    const svg = await specToSvg(charts[1]!.spec);
    const t = texts(svg);
    for (const len of LENS) {
      expect(t.filter((x) => x === `input ${len}`), len).toHaveLength(1);
      // Output lengths: once on each of the 4 panels' axes (vega drops overlapping labels: none may be missing).
      expect(t.filter((x) => x === len), len).toHaveLength(4);
    }
    expect(svg.match(/aria-roledescription="bar"/g)).toHaveLength(32);
    // A value label per bar, as the table prints it (whole tokens/s from 100 up).
    const values = t.filter((x) => /^\d{1,3}(,\d{3})*$/.test(x) || /^\d+\.\d\d$/.test(x));
    expect(values.length).toBeGreaterThanOrEqual(32);
    const vllm = grids[0]!.summary.stages.find((s) => s.label === '2048/2048')!;
    expect(t).toContain(Math.round(vllm.outputTokenThroughput).toLocaleString('en-US'));
  });

  it('draw the SLO limit on the TTFT and ITL charts when there is one, and nothing of it without', async () => {
    const withSlo = gridCharts(grids, ['vllm', 'tgi'], { ttftMs: 150, itlMs: 20 });
    const ttft = texts(await specToSvg(withSlo.find((c) => c.name === 'grid-ttft')!.spec));
    expect(ttft.filter((x) => x === 'SLO 150 ms')).toHaveLength(4); // once per panel
    const plain = texts(await specToSvg(gridCharts(grids, ['vllm', 'tgi']).find((c) => c.name === 'grid-ttft')!.spec));
    expect(plain.some((x) => x.startsWith('SLO'))).toBe(false);
  });
});

describe('sweep charts: log axes with enough ticks, SLO rules', () => {
  it('logTicks gives at least four ticks framing the data, 1-2-5 over wide ranges', () => {
    const narrow = logTicks(13.3, 36.7);
    expect(narrow.values.length).toBeGreaterThanOrEqual(4);
    expect(narrow.domain[0]).toBeLessThanOrEqual(13.3);
    expect(narrow.domain[1]).toBeGreaterThanOrEqual(36.7);
    expect(logTicks(54, 1098).values).toEqual([50, 100, 200, 500, 1000, 2000]);
  });

  it('the TTFT curve has labelled ticks over its range and the --slo limit as a labelled rule', async () => {
    const [ttft] = sweepCharts([sweep], ['vllm'], { ttftMs: 300 });
    const t = texts(await specToSvg(ttft!.spec));
    expect(t).toContain('SLO 300 ms');
    const ticks = ['20', '50', '100', '200', '500', '1000', '2000'].filter((v) => t.includes(v));
    expect(ticks.length).toBeGreaterThanOrEqual(4);
    const [bare] = sweepCharts([sweep], ['vllm']);
    expect(texts(await specToSvg(bare!.spec)).some((x) => x.startsWith('SLO'))).toBe(false);
  });
});
