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
    expect(charts.map((c) => c.name)).toEqual(['throughput-req', 'throughput-token-out', 'pertoken', 'per-out-token', 'dist-ttft', 'dist-itl', 'dist-e2e']);
    for (const c of charts) {
      expect(c.svg, c.name ?? '').toBe(1);
      expect(c.marks, c.name ?? '').toBeGreaterThan(4);
    }
    const barsInFirst = await page.locator('figure[data-chart="throughput-req"] g.mark-rect path').count();
    expect(barsInFirst).toBe(8); // 4 cells × 2 runs

    const body = await page.locator('body').innerText();
    expect(body).toContain(`evil${PAYLOAD}`);
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
});
