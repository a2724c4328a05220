import { appendFileSync, cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { makeFixtures, type Fixtures } from './fixtures.js';

const CHROMIUM = '/usr/bin/chromium';
const PAYLOAD = '<script>alert(1)</script>';
const IMG = '<img src=x onerror="window.__pwned=1">';

let fx: Fixtures;
let browser: Browser;
let html: string;

beforeAll(async () => {
  // No silent skip: CI installs chromium in .ci/run, so a missing binary is a broken environment.
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium); .ci/run does this before the tests`);
  fx = await makeFixtures();
  // A run whose server-provided text is hostile: model name, label and an error message.
  const evil = join(fx.results, '20261103-100000-evil');
  cpSync(fx.gridVllm, evil, { recursive: true });
  const summary = JSON.parse(readFileSync(join(evil, 'summary.json'), 'utf8')) as { context: Record<string, unknown> };
  summary.context.model = `evil${PAYLOAD}`;
  summary.context.label = IMG;
  writeFileSync(join(evil, 'summary.json'), JSON.stringify(summary));
  const failed = { id: 9999, stage: 0, warmup: false, status: 'error', scheduledAtMs: 0, sentAtMs: 0, dispatchLagMs: 0, clientQueueMs: 0, endAtMs: 5, chunkGapsMs: [], chunks: 0 };
  appendFileSync(join(evil, 'requests.jsonl'), `${JSON.stringify({ ...failed, error: { code: 'E_HTTP_STATUS', message: `upstream said ${PAYLOAD}`, httpStatus: 500 } })}\n`);
  // What a measured run adds: a sample request's text (hostile here) and the server's /metrics over time, on the
  // records' clock (a prediction's records start at 0 ms).
  writeFileSync(join(evil, 'sample-requests.json'), JSON.stringify({ requests: [{ index: 0, promptTokens: 128, outputTokens: 128, prompt: `say ${PAYLOAD}`, truncated: false }] }));
  const gauges = Array.from({ length: 40 }, (_, i) => ({ atMs: i * 500, running: Math.min(30, i * 3), waiting: Math.max(0, i - 10), kvUsage: i / 80, stage: 0 }));
  writeFileSync(join(evil, 'telemetry.jsonl'), `${gauges.map((g) => JSON.stringify(g)).join('\n')}\n`);

  const out = join(fx.root, 'html');
  const r = await runCli(['report', evil, fx.gridTgi, '--format', 'html', '--out', out]);
  expect(r.code, r.stderr).toBe(0);
  html = join(out, 'report.html');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  if (fx) rmSync(fx.root, { recursive: true, force: true });
});

describe('HTML report in headless Chromium', () => {
  it('is one file that fetches nothing', () => {
    const text = readFileSync(html, 'utf8');
    expect(text).not.toMatch(/<script[^>]+src=|<link[^>]+href=|https?:\/\/cdn/i);
    expect(text.length).toBeGreaterThan(400_000); // the vega runtime is inlined
  });

  it('renders every chart with marks, logs no console error, and shows hostile text as text', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    const dialogs: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console.error: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('request', (req) => {
      if (!req.url().startsWith('file:')) problems.push(`network request: ${req.url()}`);
    });
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(pathToFileURL(html).href);
    await page.evaluate(() => (globalThis as unknown as { inferbenchCharts: Promise<unknown> }).inferbenchCharts.then(() => true));

    const charts = await page.$$eval('figure.chart', (figs) =>
      figs.map((f) => ({
        name: f.getAttribute('data-chart'),
        svg: f.querySelectorAll('svg').length,
        marks: f.querySelectorAll('svg g[class*="mark-"] path, svg g[class*="mark-"] line').length,
      })),
    );
    expect(charts.map((c) => c.name)).toEqual([
      'throughput-req', 'throughput-token-out', 'pertoken', 'per-out-token', 'grid-ttft', 'grid-itl',
      'row-ttft', 'row-itl', 'row-e2e',
      'time-throughput', 'time-in-flight', 'time-ttft',
      'server-queue', 'server-kv',
      // A grid's lengths vary from cell to cell: the workload charts that need varying lengths are drawn.
      'prompt-lengths', 'output-lengths', 'ttft-vs-prompt', 'itl-by-position',
    ]);
    for (const c of charts) {
      expect(c.svg, c.name ?? '').toBe(1);
      expect(c.marks, c.name ?? '').toBeGreaterThan(4);
    }
    const barsInFirst = await page.locator('figure[data-chart="throughput-req"] g.mark-rect path').count();
    expect(barsInFirst).toBe(8); // 4 cells × 2 runs

    const body = await page.locator('body').innerText();
    expect(body).toContain(`evil${PAYLOAD}`);
    expect(await page.locator('details.sample pre').textContent()).toBe(`say ${PAYLOAD}`);
    expect(body).toContain(`upstream said ${PAYLOAD}`);
    expect(body).toContain(IMG);
    const svgText = await page.locator('figure[data-chart="pertoken"] svg').textContent();
    expect(svgText).toContain(`evil${PAYLOAD}`);
    expect(await page.locator('script').count()).toBe(3);
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(dialogs).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('fits a 1400-px window: no table hides columns behind a scroll bar, nothing wider than the page', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(pathToFileURL(html).href);
    await page.evaluate(() => (globalThis as unknown as { inferbenchCharts: Promise<unknown> }).inferbenchCharts.then(() => true));
    // A string: the test's own TypeScript has no DOM types.
    const layout = (await page.evaluate(`({
      page: document.documentElement.scrollWidth,
      tables: [...document.querySelectorAll('table')].map((t) => t.getBoundingClientRect().right),
      scrollers: [...document.querySelectorAll('body *')].filter((e) => e.tagName !== 'FIGURE' && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === 'auto').length,
    })`)) as { page: number; tables: number[]; scrollers: number };
    expect(layout.page).toBeLessThanOrEqual(1400);
    for (const right of layout.tables) expect(right).toBeLessThanOrEqual(1400);
    expect(layout.scrollers).toBe(0);
    // Charts that can stretch use the width of their cell (two to a row at 1400 px).
    const width = await page.locator('figure[data-chart="time-ttft"] svg').evaluate((e) => e.getBoundingClientRect().width);
    expect(width).toBeGreaterThan(600);
    await page.close();
  });

  it('shows one row at a time: the picker switches the percentile table and the histograms to that row', async () => {
    const page = await browser.newPage();
    await page.goto(pathToFileURL(html).href);
    await page.evaluate(() => (globalThis as unknown as { inferbenchCharts: Promise<unknown> }).inferbenchCharts.then(() => true));
    const visible = (): Promise<string[]> => page.$$eval('.row-view', (d) => d.filter((x) => !x.hasAttribute('hidden')).map((x) => x.getAttribute('data-row') ?? ''));
    const bars = (): Promise<string[]> => page.$$eval('figure[data-chart="row-e2e"] g.mark-rect path', (els) => els.map((e) => e.getAttribute('aria-label') ?? ''));
    const options = await page.$$eval('#row-pick option', (o) => o.map((x) => x.getAttribute('value') ?? ''));
    // Two runs of a 2×2 grid: each cell's burst and its latency pass.
    expect(options).toHaveLength(16);
    expect(await visible()).toEqual([options[0]]);
    const before = await bars();
    expect(before.length).toBeGreaterThan(0);
    await page.selectOption('#row-pick', options[7]!);
    await page.evaluate(() => (globalThis as unknown as { inferbenchRowPicked: Promise<unknown> }).inferbenchRowPicked.then(() => true));
    expect(await visible()).toEqual([options[7]]);
    const after = await bars();
    expect(after.length).toBeGreaterThan(0);
    expect(after).not.toEqual(before);
    // The table under the picker is that row's: its request count is the one summary.json has.
    const text = await page.locator(`.row-view[data-row="${options[7]}"]`).innerText();
    expect(text).toMatch(/requests ok\/sent \d+\/\d+/);
    for (const id of ['rows', 'goodput', 'over-time', 'server', 'client', 'workload']) expect(await page.locator(`h2#${id}`).count(), id).toBe(1);
    await page.close();
  });
});
