import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Stats } from '../../src/metrics/stats.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import { capacityChart } from '../../src/report/charts/capacity.js';
import { specToSvg } from '../../src/report/charts/render.js';
import { renderMarkdownReport, renderTerminalReport, type RunSummaryDoc } from '../../src/report/run-summary.js';
import { runCli } from '../helpers/cli.js';
import { capacityRun } from './capacity-runs.js';

/** Issue 36 item 10: rows that did not run their course are shown as what they are, in every rendering. */

const read = (dir: string, file: string): string => readFileSync(join(dir, file), 'utf8');
const summary = (dir: string): RunSummaryDoc => JSON.parse(read(dir, 'summary.json')) as RunSummaryDoc;

describe('a row stopped as over-saturated shows the requests it sent', () => {
  let root: string;
  let run: string;
  let terminal: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'ib-honest-'));
    run = join(root, 'results', 'over');
    // 40 req/s of 512/128 on one simulated A100 is five times its capacity: the row stops as over-saturated.
    const r = await runCli(['predict', '--profile', 'constant', '--rate', '2,40', '--max-seconds', '20', '--out', run]);
    expect(r.code, r.stderr).toBe(0);
    terminal = r.stdout;
    const rep = await runCli(['report', run, '--format', 'html', '--out', join(root, 'report')]);
    expect(rep.code, rep.stderr).toBe(0);
  }, 120_000);

  it('summary.json keeps every request of the stopped row and how it ended', () => {
    const over = summary(run).stages.find((s) => s.overSaturated !== undefined) as StageSummary;
    expect(over, 'the 40 req/s row stopped as over-saturated').toBeDefined();
    const b = over.beforeStop as NonNullable<StageSummary['beforeStop']>;
    expect(b.sent).toBe(over.requests.warmup + over.requests.total);
    expect(b.ok + b.failed + b.cut).toBe(b.sent);
    expect(b.ok).toBeGreaterThan(0);
  });

  it('terminal, table.md, table.csv and report.html all say "ok/sent before stop", never 0/0 or 0.00 figures', () => {
    const over = summary(run).stages.find((s) => s.overSaturated !== undefined) as StageSummary;
    const b = over.beforeStop as NonNullable<StageSummary['beforeStop']>;
    const cell = `${b.ok}/${b.sent} before stop`;
    const mdRow = read(run, 'table.md').split('\n').find((l) => l.includes(over.label)) as string;
    expect(mdRow).toContain(cell);
    expect(mdRow).not.toMatch(/\| +0\/0 +\|/);
    const termRow = terminal.split('\n').find((l) => l.startsWith(`| ${over.label}`)) as string;
    expect(termRow).toContain(cell);
    const csv = read(run, 'table.csv').split('\n');
    const headers = (csv[0] as string).split(',');
    const row = (csv.find((l) => l.startsWith(over.label)) as string).split(',');
    expect(row[headers.indexOf('n_sent_before_stop')]).toBe(String(b.sent));
    expect(row[headers.indexOf('n_ok_before_stop')]).toBe(String(b.ok));
    const html = read(join(root, 'report'), 'report.html');
    expect(html).toContain(`requests ok/sent ${cell}`);
    expect(html).toContain('— req/s · — output tok/s · no measured window');
    expect(html).not.toContain('window 0.00 s');
  });

  it('`ls` counts the row as stopped, not as failed or as nothing', async () => {
    const r = await runCli(['ls', '--results', join(root, 'results')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('2 (1 stopped: over-saturated)');
  });
});

const stat = (v: number, count: number): Stats => ({ count, mean: v, median: v, p90: v, p95: v, p99: v, min: v, max: v, stddev: 0 });
const row = (label: string, extra: Partial<StageSummary> = {}): StageSummary =>
  ({
    index: 0, label, kind: 'open', targetRate: 4, durationS: 5,
    requests: { total: 40, ok: 40, errors: 0, incomplete: 0, warmup: 3 },
    errorsByCode: {}, failureShare: 0, requestThroughput: 4, outputTokenThroughput: 512, promptTokenThroughput: 0,
    totalTokenThroughput: 0, sendRate: 4, completionRate: 4, belowTarget: false, meanConcurrency: 2,
    metrics: { ttftMs: stat(50, 40), itlMs: stat(10, 40), e2eMs: stat(1000, 40) },
    outputLengthMismatches: 0, promptLengthMismatches: 0, tokenCountSources: {}, interrupted: false,
    ...extra,
  }) as unknown as StageSummary;
const docOf = (stages: StageSummary[], extra: Partial<RunSummaryDoc> = {}): RunSummaryDoc =>
  ({
    tool: { name: 'inferbench', version: 'test' }, runId: 'r', createdAt: '', finishedAt: '', layout: 'sweep',
    context: { model: 'm', engine: 'e', promptTokens: 512, outputTokens: 128 }, target: { api: 'openai', engine: 'e', model: 'm', simulated: false },
    profile: 'constant', workload: 'w', windowRules: 'r', stages, interrupted: false, notes: [], ...extra,
  }) as RunSummaryDoc;

describe('an interrupted row is marked and says how few requests its figures rest on', () => {
  const cut = row('throughput', {
    kind: 'burst',
    requests: { total: 257, ok: 5, errors: 0, incomplete: 252, warmup: 0 },
    metrics: { ttftMs: stat(805, 5), itlMs: stat(11.8, 5), e2eMs: stat(2000, 5) },
    interrupted: true,
  });
  const doc = docOf([row('synchronous', { kind: 'closed', concurrency: 1 }), cut], { interrupted: true });

  it('in table.md and the terminal: "(interrupted)" after the label and a line with 5 of 257', () => {
    for (const text of [renderMarkdownReport(doc), renderTerminalReport(doc)]) {
      const line = text.split('\n').find((l) => l.includes('| throughput')) as string;
      expect(line).toContain('throughput (interrupted)');
      expect(text).toContain('throughput (interrupted): figures from 5 of 257 measured requests, 252 cut by the stop');
    }
  });
});

describe('a high failure share prints a WARNING line', () => {
  const failing = row('asynchronous@4.00 req/sec', {
    requests: { total: 21, ok: 15, errors: 6, incomplete: 0, warmup: 2 },
    errorsByCode: { 'E_HTTP_STATUS:500': 2, E_STREAM_TRUNCATED: 2, E_RESET: 1, E_STREAM_PARSE: 1 },
    failureShare: 6 / 21,
  });

  it('29% failed: "figures describe the 71% that succeeded" under the table in every rendering', () => {
    for (const text of [renderMarkdownReport(docOf([failing])), renderTerminalReport(docOf([failing]))]) {
      expect(text).toContain('WARNING: 29% of requests failed (6 of 21) in asynchronous@4.00 req/sec; its figures describe the 71% that succeeded');
    }
  });

  it('under the 5% threshold: no warning', () => {
    const few = row('asynchronous@4.00 req/sec', { requests: { total: 40, ok: 39, errors: 1, incomplete: 0, warmup: 2 }, failureShare: 1 / 40 });
    expect(renderMarkdownReport(docOf([few]))).not.toContain('WARNING');
  });
});

describe('table.md has the reasoning columns the terminal shows', () => {
  it('TTFO and reasoning tokens, after TTFT, with the figures', () => {
    const r = row('asynchronous@4.00 req/sec', { metrics: { ttftMs: stat(50, 40), itlMs: stat(10, 40), e2eMs: stat(1000, 40), ttfoMs: stat(412.5, 40), reasoningTokens: stat(96, 40) } });
    const md = renderMarkdownReport(docOf([r]));
    const header = md.split('\n').find((l) => l.includes('Benchmark')) as string;
    const cells = header.split('|').map((c) => c.trim());
    expect(cells.indexOf('Time to First Output Token')).toBe(cells.indexOf('Time to First Token') + 1);
    expect(cells).toContain('Reasoning Tokens');
    expect(md).toMatch(/\| +412\.50 ms +\| +96\.00 +\|/);
    expect(renderTerminalReport(docOf([r]))).toContain('TTFO (ms)');
  });
});

describe('report.html says when there was no failure', () => {
  it('"Failures: none" with the count of measured requests', async () => {
    const root = mkdtempSync(join(tmpdir(), 'ib-honest-'));
    const r = await runCli(['predict', '--profile', 'constant', '--rate', '2', '--max-seconds', '5', '--out', join(root, 'run')]);
    expect(r.code, r.stderr).toBe(0);
    const rep = await runCli(['report', join(root, 'run'), '--format', 'html', '--out', join(root, 'report')]);
    expect(rep.code, rep.stderr).toBe(0);
    const ok = summary(join(root, 'run')).stages.reduce((n, s) => n + s.requests.total, 0);
    expect(read(join(root, 'report'), 'report.html')).toContain(`<h2 id="failures">Failures</h2>\n<p>Failures: none — all ${ok} measured requests succeeded.</p>`);
  }, 120_000);
});

describe('capacity.png is laid out to its width', () => {
  it('the subtitle wraps to the panels, so the image is not three times wider than its plots', async () => {
    const run = capacityRun({ id: 'cap1', engine: 'vllm', probes: [[1, true], [2, true], [4, true], [8, false], [6, true], [7, false]] });
    // The answer as a search writes it (load/capacity.ts): the longest line of the subtitle.
    (run.summary.capacity as { verdict: string }).verdict =
      'capacity: 6.00 req/s — the highest rate at which 99% of requests met TTFT ≤ 300 ms, ITL ≤ 50 ms with at most 1% failed (first failure at 7.00 req/s; ±5%)';
    const chart = capacityChart(run, 'vllm', 'capacity');
    expect(chart).toBeDefined();
    const svg = await specToSvg(chart!.spec);
    const width = Number(/<svg[^>]*\swidth="([\d.]+)"/.exec(svg)?.[1]);
    // The 560-px panels, their axes and the legends beside them (the widest: "did not keep up (queue grew)").
    expect(width).toBeGreaterThan(560);
    expect(width).toBeLessThanOrEqual(1000);
  });
});
