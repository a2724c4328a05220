import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CapacityResult } from '../../src/load/capacity-types.js';
import { boundaryLabel, capacityCell } from '../../src/report/capacity-text.js';
import { runCli } from '../helpers/cli.js';

const CHROMIUM = '/usr/bin/chromium';
const PNG_MAGIC = '89504e470d0a1a0a';

let root: string;
let browser: Browser;
/** Real capacity searches in virtual time (`predict --profile capacity`), one folder each. */
const runs: Record<'vllm' | 'sglang' | 'streams' | 'slo500', string> = { vllm: '', sglang: '', streams: '', slo500: '' };

const capacityOf = (dir: string): CapacityResult => (JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as { capacity: CapacityResult }).capacity;

async function predict(name: keyof typeof runs, args: string[]): Promise<void> {
  const out = join(root, 'results', name);
  const r = await runCli(['predict', '--profile', 'capacity', '--model', 'Qwen2-7B-Instruct', '--gpu', 'A100-80GB', ...args, '--out', out]);
  expect(r.code, r.stderr).toBe(0);
  runs[name] = out;
}

async function openChecked(file: string): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console.error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(pathToFileURL(file).href);
  await page.evaluate(() => (globalThis as unknown as { inferbenchCharts: Promise<unknown> }).inferbenchCharts.then(() => true));
  return { page, problems };
}

/** aria-labels of the marks of one kind in one chart (vega labels each mark with its fields and values). */
const labels = (page: Page, chart: string, selector: string): Promise<string[]> =>
  page.$$eval(`figure[data-chart="${chart}"] ${selector}`, (els) => els.map((e) => e.getAttribute('aria-label') ?? ''));

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium); .ci/run does this before the tests`);
  root = mkdtempSync(join(tmpdir(), 'ib-capacity-'));
  await Promise.all([
    predict('vllm', ['--engine', 'vllm', '--slo', 'ttft:300']),
    predict('sglang', ['--engine', 'sglang', '--gpus', '2', '--slo', 'ttft:300']),
    predict('streams', ['--engine', 'vllm', '--slo', 'ttft:300', '--capacity-axis', 'concurrency']),
    predict('slo500', ['--engine', 'vllm', '--slo', 'ttft:500']),
  ]);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('capacity chart in `report`', () => {
  it('draws every probe by outcome, the fit, the target, the boundary and the TTFT/ITL percentiles', async () => {
    const out = join(root, 'report');
    const r = await runCli(['report', runs.vllm, '--format', 'html,png,svg', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const cap = capacityOf(runs.vllm);
    // The search found a boundary: something passed and something failed, with over-saturated probes past it.
    expect(cap.feasibleMax).not.toBeNull();
    expect(cap.firstBreach).not.toBeNull();
    expect(readFileSync(join(out, 'capacity.png')).subarray(0, 8).toString('hex')).toBe(PNG_MAGIC);
    const svg = readFileSync(join(out, 'capacity.svg'), 'utf8');
    expect(svg).toContain(boundaryLabel(cap));

    const { page, problems } = await openChecked(join(out, 'report.html'));
    const names = await page.$$eval('figure.chart', (f) => f.map((x) => x.getAttribute('data-chart')));
    expect(names[0]).toBe('capacity');

    // Top panel: one symbol per probe, its outcome in its label (colour and shape both encode it).
    const points = await labels(page, 'capacity', 'g.mark-symbol[class*="concat_0_"] path');
    expect(points).toHaveLength(cap.probes.length);
    const count = (what: string): number => points.filter((l) => l.endsWith(`probe: ${what}`)).length;
    expect(count('pass')).toBe(cap.probes.filter((p) => p.pass).length);
    expect(count('did not keep up (queue grew)')).toBe(cap.probes.filter((p) => p.overSaturated).length);
    expect(count('did not keep up (queue grew)')).toBeGreaterThan(0);
    expect(count('pass') + count('fail') + count('did not keep up (queue grew)')).toBe(cap.probes.length);
    const fills = await page.$$eval('figure[data-chart="capacity"] g.mark-symbol[class*="concat_0_"] path', (els) => els.map((e) => e.getAttribute('fill')));
    expect(new Set(fills).size).toBeGreaterThan(1); // pass and over-saturated probes differ in colour

    // The monotone fit as one line through every fitted load; the target as a rule labelled with it.
    const fit = await page.$$eval('figure[data-chart="capacity"] g.mark-line[class*="concat_0_"] path', (els) => els.map((e) => e.getAttribute('d') ?? ''));
    expect(fit).toHaveLength(1);
    expect((fit[0]?.match(/L/g) ?? []).length).toBe(cap.fitted.length - 1);
    const texts = await page.$$eval('figure[data-chart="capacity"] g.mark-text text', (els) => els.map((e) => e.textContent));
    expect(texts).toContain(`target ${cap.attainment}%`);
    expect(texts).toContain(boundaryLabel(cap));
    expect(texts).toContain('TTFT limit 300 ms');

    // The boundary band spans feasibleMax … firstBreach in both panels.
    const bands = await labels(page, 'capacity', 'g.mark-rect path');
    expect(bands).toHaveLength(2);
    for (const b of bands) expect(b).toBe(`lo: ${cap.feasibleMax}; hi: ${cap.firstBreach}`);

    // Bottom panel: TTFT and ITL, p50 and p99, one line each, a point per probe with completions.
    const lat = await labels(page, 'capacity', 'g.mark-line[class*="concat_1_"] path');
    expect(lat).toHaveLength(4);
    const series = lat.map((l) => /latency: (\w+); percentile: (p\d+)/.exec(l)?.slice(1).join(' ')).sort();
    expect(series).toEqual(['ITL p50', 'ITL p99', 'TTFT p50', 'TTFT p99']);

    const legend = await page.locator('figure[data-chart="capacity"] g.role-legend-label text').allTextContents();
    expect(legend).toEqual(expect.arrayContaining(['pass', 'fail', 'did not keep up (queue grew)', 'TTFT', 'ITL', 'p50', 'p99']));
    expect(problems).toEqual([]);
    await page.close();
  });
});

describe('`compare` of capacity runs', () => {
  it('ranks by capacity, per GPU and per dollar, and overlays every run’s attainment curve', async () => {
    const out = join(root, 'compare');
    const r = await runCli(['compare', runs.vllm, runs.sglang, '--gpu-hour-price', '2', '--format', 'md,json,csv,html,png', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const a = capacityOf(runs.vllm);
    const b = capacityOf(runs.sglang);
    const [first, second] = (a.feasibleMax ?? 0) >= (b.feasibleMax ?? 0) ? [a, b] : [b, a];
    // Both runs are predictions (virtual time): the cell says their answer repeats exactly, not a search step.
    const cell = (c: typeof a): string => capacityCell(c, { predicted: true });
    expect(r.stdout).toContain('## Capacity ranking');
    expect(r.stdout).toContain(cell(first));
    expect(cell(first)).toMatch(/^\d+\.\d\d req\/s \(\+\d+\.\d% to the first failure; virtual time: repeats exactly\)$/);

    const json = JSON.parse(readFileSync(join(out, 'compare.json'), 'utf8')) as { capacityRanking: { entries: { feasibleMax: number; gpus: number; capacityPerGpu: number; requestsPerDollar: number; rank: number }[] } };
    const entries = json.capacityRanking.entries;
    expect(entries.map((e) => e.feasibleMax)).toEqual([first.feasibleMax, second.feasibleMax]);
    expect(entries.map((e) => e.rank)).toEqual([1, 2]);
    for (const e of entries) {
      expect(e.capacityPerGpu).toBeCloseTo(e.feasibleMax / e.gpus, 9);
      expect(e.requestsPerDollar).toBeCloseTo((e.feasibleMax * 3600) / (2 * e.gpus), 6);
    }
    expect(entries.map((e) => e.gpus).sort()).toEqual([1, 2]);
    expect(readFileSync(join(out, 'capacity-ranking.csv'), 'utf8').split('\n')[0]).toContain('capacity,first_breach,precision,requests_per_s_at_capacity,capacity_per_gpu,rank_per_gpu');
    expect(readFileSync(join(out, 'capacity.png')).subarray(0, 8).toString('hex')).toBe(PNG_MAGIC);

    const { page, problems } = await openChecked(join(out, 'compare.html'));
    const rows = await page.$$eval('#capacity-ranking + div table tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(rows.map((row) => row[0])).toEqual(['1', '2']);
    expect(rows[0]?.[4]).toBe(cell(first));
    // One fitted curve and one capacity rule per run; the legend names each run with its capacity.
    expect(await labels(page, 'capacity', 'g.mark-line path')).toHaveLength(2);
    const rules = await labels(page, 'capacity', 'g.mark-rule path, g.mark-rule line');
    expect(rules.filter((l) => /^load/.test(l))).toHaveLength(2);
    const legend = await page.locator('figure[data-chart="capacity"] g.role-legend-label text').allTextContents();
    expect(legend.filter((t) => t.endsWith(capacityCell(a, { short: true })) || t.endsWith(capacityCell(b, { short: true })))).toHaveLength(2);
    const points = await labels(page, 'capacity', 'g.mark-symbol.role-mark path');
    expect(points).toHaveLength(a.probes.length + b.probes.length);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('refuses capacities under another SLO or on another axis in one line, and draws one chart per axis when allowed', async () => {
    const slo = await runCli(['compare', runs.vllm, runs.slo500, '--format', 'md', '--out', join(root, 'refused')]);
    expect(slo.code).toBe(2);
    expect(slo.stderr.trim().split('\n')).toHaveLength(1);
    expect(slo.stderr).toContain('capacity SLO: ttft ≤ 300 ms');
    expect(slo.stderr).toContain('vs ttft ≤ 500 ms');

    const axis = await runCli(['compare', runs.vllm, runs.streams, '--format', 'md', '--out', join(root, 'refused')]);
    expect(axis.code).toBe(2);
    expect(axis.stderr).toContain('capacity axis: rate (req/s)');

    const out = join(root, 'mixed');
    const mixed = await runCli(['compare', runs.vllm, runs.streams, '--allow-mismatch', '--format', 'md,svg', '--out', out]);
    expect(mixed.code, mixed.stderr).toBe(0);
    expect(mixed.stdout).toContain('WARNING: the capacities were measured under different terms (axis)');
    expect(readFileSync(join(out, 'capacity-rate.svg'), 'utf8')).toContain('load (offered request rate, req/s)');
    expect(readFileSync(join(out, 'capacity-concurrency.svg'), 'utf8')).toContain('load (concurrent streams)');
  });
});
