import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, runCli } from '../helpers/cli.js';
import { runIdOf } from '../../src/store/run-store.js';
import { spawnCli, type LongCli } from './spawn-cli.js';

const CHROMIUM = '/usr/bin/chromium';
const PAYLOAD = '<script>window.__pwned=1</script>';
const IMG = '<img src=x onerror="window.__pwned=2">';
/**
 * Screenshots go to a temp folder: `npm test` never rewrites the tracked docs/images/dashboard-*.png. Set
 * INFERBENCH_UPDATE_DOC_IMAGES=1 to refresh those (docs/dashboard.md shows them).
 */
const UPDATE_DOC_IMAGES = process.env['INFERBENCH_UPDATE_DOC_IMAGES'] === '1';
let shots: string;

let root: string;
let results: string;
let ui: LongCli;
let url: string;
let browser: Browser;
const ids = { vllm: runIdOf('20261101-100000-grid-vllm'), tgi: runIdOf('20261102-100000-grid-tgi'), evil: runIdOf('20261103-100000-sweep-evil') };

const GRID = ['--profile', 'grid', '--input-lens', '128,512', '--output-lens', '128,512', '--num-prompts', '30'];

async function predict(args: string[], name: string): Promise<string> {
  const out = join(results, name);
  const r = await runCli(['predict', ...args, '--out', out]);
  expect(r.code, r.stderr).toBe(0);
  return out;
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium); npm test does this when it can`);
  root = mkdtempSync(join(tmpdir(), 'ib-ui-'));
  results = join(root, 'inferbench-results');
  mkdirSync(results, { recursive: true });
  const [vllm, , evil] = await Promise.all([
    predict([...GRID, '--engine', 'vllm'], '20261101-100000-grid-vllm'),
    predict([...GRID, '--engine', 'tgi', '--label', 'tgi-baseline'], '20261102-100000-grid-tgi'),
    predict(['--profile', 'sweep', '--max-requests', '40', '--sweep-rates', '2', '--engine', 'sglang', '--label', IMG], '20261103-100000-sweep-evil'),
  ]);
  // Hostile text where a server or a user writes it: the model name, the label, an error message.
  const summary = JSON.parse(readFileSync(join(evil, 'summary.json'), 'utf8')) as { context: Record<string, unknown> };
  summary.context.model = `evil${PAYLOAD}`;
  writeFileSync(join(evil, 'summary.json'), JSON.stringify(summary));
  const failed = { id: 9999, stage: 0, warmup: false, status: 'error', scheduledAtMs: 0, sentAtMs: 0, dispatchLagMs: 0, clientQueueMs: 0, endAtMs: 5, chunkGapsMs: [], chunks: 0 };
  appendFileSync(join(evil, 'requests.jsonl'), `${JSON.stringify({ ...failed, error: { code: 'E_HTTP_STATUS', message: `upstream said ${PAYLOAD}`, httpStatus: 500 } })}\n`);

  // A run's server gauges and GPU power (as `run --power` writes them), from its first request on: the run page charts
  // them as the HTML report does.
  const firstSend = Math.min(...readFileSync(join(vllm, 'requests.jsonl'), 'utf8').split('\n').filter((l) => l).map((l) => (JSON.parse(l) as { sentAtMs: number }).sentAtMs));
  const at = (i: number): number => firstSend + 100 * i;
  writeFileSync(join(vllm, 'telemetry.jsonl'), Array.from({ length: 20 }, (_, i) => `${JSON.stringify({ atMs: at(i), stage: 0, running: i % 5, waiting: 0, kvUsage: 0.1 })}\n`).join(''));
  writeFileSync(join(vllm, 'power.jsonl'), Array.from({ length: 20 }, (_, i) => `${JSON.stringify({ t: at(i), gpu: 0, watts: 200 + 10 * i, epochMs: 1e12 + at(i) })}\n`).join(''));

  ui = spawnCli(['ui', '--results', results, '--port', '0']);
  url = (await ui.waitFor(/inferbench dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/))[1] as string;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  shots = UPDATE_DOC_IMAGES ? join(repoRoot, 'docs', 'images') : join(root, 'screenshots');
  mkdirSync(shots, { recursive: true });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await ui?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** Console errors, page errors, dialogs and any request that leaves 127.0.0.1: each is a failure. */
function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console.error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('request', (req) => {
    if (!req.url().startsWith(url)) problems.push(`request outside the dashboard: ${req.url()}`);
  });
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  return problems;
}

/** Waits until `selector` matches exactly `n` elements (or at least n with atLeast). */
function waitCount(page: Page, selector: string, n: number, opts: { atLeast?: boolean; timeout?: number } = {}): Promise<unknown> {
  const test = opts.atLeast ? '>=' : '===';
  return page.waitForFunction(`document.querySelectorAll(${JSON.stringify(selector)}).length ${test} ${n}`, null, { timeout: opts.timeout ?? 15_000 });
}

/** Live checks wait for a state the run holds until the test moves on: the timeout only bounds a stuck run. */
const LIVE_WAIT_MS = 90_000;

/** Waits until the live panel shows `status` and the run's table has `rows` rows (at least that many with atLeast). */
function waitLive(page: Page, status: string, rows: number, atLeast = false): Promise<unknown> {
  return page.waitForFunction(
    `document.querySelector('#live-panel [data-live-status]')?.textContent === ${JSON.stringify(status)} && document.querySelectorAll('#run-table tbody tr').length ${atLeast ? '>=' : '==='} ${rows}`,
    null,
    { timeout: LIVE_WAIT_MS },
  );
}

/** Tables wider than their box (their columns past the right edge), as "id or tag: scroll width / box width". */
const overflowing = (page: Page): Promise<string[]> =>
  page.$$eval('.scroll', (boxes) => boxes.filter((b) => b.scrollWidth > b.clientWidth + 1).map((b) => `${b.parentElement?.id || b.parentElement?.tagName}: ${b.scrollWidth}/${b.clientWidth}`));

/** Chart text drawn outside its SVG (an axis title cut at the edge), as "chart: text". */
const clippedText = (page: Page): Promise<string[]> =>
  page.$$eval('figure.chart svg', (svgs) =>
    svgs.flatMap((svg) => {
      const box = svg.getBoundingClientRect();
      return [...svg.querySelectorAll('.role-axis-title text, .role-title text')]
        .filter((t) => {
          const r = t.getBoundingClientRect();
          return r.width > 0 && (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1);
        })
        .map((t) => `${svg.closest('figure')?.getAttribute('data-chart')}: ${t.textContent}`);
    }),
  );

const runRows = (page: Page): Promise<string[]> => page.$$eval('#runs-list tbody tr', (trs) => trs.map((tr) => tr.textContent ?? ''));

/** Bars (rect marks) or points (symbol marks) drawn in a chart. */
const marks = (page: Page, selector: string, kind: 'rect' | 'symbol'): Promise<number> => page.locator(`${selector} svg g.mark-${kind} path`).count();

describe('inferbench ui in headless Chromium', () => {
  it('lists, filters, opens a run, compares two, and shows a run live; hostile text stays text', async () => {
    // 1400 px: the width the newcomer's report saw tables overflow at.
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    // Every wait is for a state; the bound only stops a stuck page, and a busy 2-core machine needs room.
    page.setDefaultTimeout(LIVE_WAIT_MS);
    const problems = watch(page);

    // Runs: every saved run, filterable like `ls`.
    await page.goto(url);
    await waitCount(page, '#runs-list tbody tr', 3);
    expect((await runRows(page)).join('\n')).toContain(`evil${PAYLOAD}`);
    await page.fill('[data-filter="engine"]', 'tgi');
    expect(await runRows(page)).toHaveLength(1);
    expect((await runRows(page))[0]).toContain(ids.tgi);
    await page.fill('[data-filter="engine"]', '');
    await page.fill('[data-filter="label"]', 'onerror');
    expect((await runRows(page))[0]).toContain(IMG);
    await page.fill('[data-filter="label"]', '');
    await page.fill('[data-filter="from"]', '2999-01-01');
    expect(await runRows(page)).toHaveLength(0);
    await page.fill('[data-filter="from"]', '');
    await page.selectOption('[data-filter="tool"]', 'inferbench');
    expect(await runRows(page)).toHaveLength(3);
    await page.evaluate('document.activeElement.blur()');
    // The profile, and `ls`'s Rows cell: a 2×2 grid is 4 cells.
    expect(await page.$$eval('#runs-list thead th', (ths) => ths.map((t) => t.textContent))).toContain('Profile');
    expect((await runRows(page)).find((r) => r.includes(ids.vllm))).toMatch(/grid.*4 cells/);
    expect((await runRows(page)).find((r) => r.includes(ids.evil))).toMatch(/sweep/);
    await page.screenshot({ path: join(shots, 'dashboard-runs.png') });

    // Run: the seed table, every report chart, distributions, metadata and command line.
    await page.click(`a[href="#/run/${ids.vllm}"]`);
    await waitCount(page, '#run-table tbody tr', 4);
    await waitCount(page, '#run-dists figure.chart svg', 4, { timeout: 20_000 });
    const figures = await page.$$eval('#run-main figure.chart, #run-dists figure.chart', (f) => f.map((x) => x.getAttribute('data-chart')));
    expect(figures).toEqual(['throughput-req', 'throughput-token-out', 'pertoken', 'per-out-token', 'grid-ttft', 'grid-itl', 'row-ttft', 'row-itl', 'row-e2e', 'ttft-over-time']);
    await waitCount(page, '#run-main figure.chart svg', 6); // the report's grid charts, TTFT and ITL included
    expect(await marks(page, 'figure[data-chart="throughput-req"]', 'rect')).toBe(4);
    expect(await marks(page, 'figure[data-chart="ttft-over-time"]', 'symbol')).toBeGreaterThan(100);
    expect(await page.textContent('#run-command')).toMatch(/^inferbench predict/);
    expect(await overflowing(page)).toEqual([]);
    expect(await clippedText(page)).toEqual([]);
    // Histograms show one row at a time: picking another row redraws them with that row's values.
    expect(await page.locator('#dist-row option').count()).toBe(8); // 4 cells: a burst and a latency pass each
    const bars = (): Promise<string> => page.locator('#run-dists figure[data-chart="row-ttft"] svg g.mark-rect').innerHTML();
    const first = await bars();
    await page.selectOption('#dist-row', { index: 1 });
    await page.waitForFunction(`document.querySelector('#run-dists figure[data-chart="row-ttft"] svg g.mark-rect')?.innerHTML !== ${JSON.stringify(first)}`, null, { timeout: 20_000 });
    await page.screenshot({ path: join(shots, 'dashboard-run.png') });
    // The HTML report's GPU-power chart, beside the server's gauges.
    await waitCount(page, '#run-telemetry figure[data-chart="gpu-power"] svg', 1, { timeout: 20_000 });
    expect(await page.locator('#run-telemetry figure[data-chart="gpu-power"] svg g.mark-line path').count()).toBe(1);
    expect((await clippedText(page)).filter((t) => /^(gpu-power|server-)/.test(t))).toEqual([]);

    // The hostile run: its model, label and error message are shown as text, nothing runs.
    await page.goto(`${url}#/run/${ids.evil}`);
    await waitCount(page, '#run-dists table tbody tr', 1, { atLeast: true, timeout: 20_000 });
    expect(await page.textContent('h1')).toContain(`evil${PAYLOAD}`);
    expect(await page.textContent('#run-dists')).toContain(`upstream said ${PAYLOAD}`);
    expect(await page.locator('#app img, #app script').count()).toBe(0);

    // Compare: tick two runs, see the tables, the verdict and the charts.
    await page.goto(url);
    await waitCount(page, '#runs-list tbody tr', 3);
    await page.check(`[data-tick="${ids.vllm}"]`);
    await page.check(`[data-tick="${ids.tgi}"]`);
    await page.click('#compare-ticked');
    await waitCount(page, '#compare-charts figure.chart svg', 6, { timeout: 20_000 }); // the four seed charts, TTFT and ITL
    expect(await marks(page, '#compare-charts figure[data-chart="throughput-req"]', 'rect')).toBe(8); // 4 cells × 2 runs
    expect(await page.locator('#verdict tbody tr').count()).toBeGreaterThan(0);
    expect(await page.locator('#compare section').count()).toBe(2);
    // Every column, the Δ ones included, fits the page: no table wider than its box.
    expect(await page.$$eval('#compare section th', (ths) => ths.map((t) => t.textContent))).toContain('Δ req/s vs 1st');
    expect(await overflowing(page)).toEqual([]);
    expect(await clippedText(page)).toEqual([]);
    await page.evaluate(`document.querySelector('#verdict').previousElementSibling.scrollIntoView()`);
    await page.screenshot({ path: join(shots, 'dashboard-compare.png') });

    // Live: `run --ui` into the served folder feeds this dashboard. Its first row (20 requests at 40 req/s) ends
    // quickly; its second (20 requests at 0.01 req/s) stays in progress until the test stops it, so every check
    // below waits for a state that holds until then, not for a moment that a busy machine may miss.
    await page.goto(url);
    await waitCount(page, '#runs-list tbody tr', 3);
    const liveName = '20991231-000000-live';
    const liveId = runIdOf(liveName);
    const run = spawnCli([
      'run', '--ui', '--out', join(results, liveName), '--profile', 'constant', '--rate', '40,0.01', '--max-requests', '20',
      '--prompt-tokens', '32', '--output-tokens', '8', '--tokenizer', 'approx', '--idle-wait', '0', '--label', 'live',
    ]);
    try {
      await page.waitForSelector(`a[href="#/run/${liveId}"]`, { timeout: LIVE_WAIT_MS });
      await page.click(`a[href="#/run/${liveId}"]`);
      await waitLive(page, 'running', 1);
      // The second row in progress, with its counters (done, in flight, errors) pushed from the running process.
      await page.waitForFunction(`document.querySelector('[data-stat="row"] b')?.textContent.startsWith('2/2 asynchronous@0.01')`, null, { timeout: LIVE_WAIT_MS });
      expect(await page.textContent('[data-stat="in-flight"] b')).toMatch(/^\d+$/);
      await waitCount(page, '#live-panel svg g.mark-symbol path', 5, { atLeast: true, timeout: LIVE_WAIT_MS });
      expect(await clippedText(page)).toEqual([]);
      await page.screenshot({ path: join(shots, 'dashboard-live.png') });
      expect(run.stdout()).toContain(`live: ${url}#/run/${liveId} (the dashboard serving ${results})`);
      // Ctrl-C: the run keeps its finished row and tells the dashboard it was interrupted.
      run.child.kill('SIGINT');
      expect(await run.exited).toBe(130);
      await waitLive(page, 'interrupted', 1, true);
    } finally {
      await run.stop();
    }
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(problems).toEqual([]);
    await page.close();
  }, 300_000);
});
