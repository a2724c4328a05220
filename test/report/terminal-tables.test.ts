import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseColumns, resolveColumns } from '../../src/report/columns.js';
import { renderTerminalReport, type RunSummaryDoc } from '../../src/report/run-summary.js';
import { fromMarkdown, terminalStyle } from '../../src/report/terminal.js';
import { runCli } from '../helpers/cli.js';

const root = mkdtempSync(join(tmpdir(), 'ib-terminal-'));
const sweepDir = join(root, 'sweep');
const gridDir = join(root, 'grid');
let sweepOut = '';
let gridOut = '';

/** The printed table's lines (header first), cells trimmed. */
function tableOf(stdout: string): string[][] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('|') && !/^\|[:-]/.test(l))
    .map((l) => l.split('|').slice(1, -1).map((c) => c.trim()));
}

beforeAll(async () => {
  // Predictions answer in virtual time: a whole sweep or grid in well under a second each.
  const [sweep, grid] = await Promise.all([
    // The layout without prediction intervals (--interval-level 0); the last test here checks them.
    runCli(['predict', '--max-requests', '40', '--sweep-rates', '3', '--slo', 'ttft:100,itl:30', '--interval-level', '0', '--out', sweepDir]),
    runCli(['predict', '--profile', 'grid', '--input-lens', '128,512', '--output-lens', '64,256', '--num-prompts', '20', '--gpus', '1', '--interval-level', '0', '--out', gridDir]),
  ]);
  expect(sweep.code, sweep.stderr).toBe(0);
  expect(grid.code, grid.stderr).toBe(0);
  sweepOut = sweep.stdout;
  gridOut = grid.stdout;
}, 60_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('terminal tables: compact, plain, one window line', () => {
  it('prints no Markdown bold and fits about 160 columns by default, while table.md keeps the seed layout', () => {
    for (const out of [sweepOut, gridOut]) {
      expect(out).not.toContain('**');
      for (const line of out.split('\n').filter((l) => l.startsWith('|'))) expect(line.length, line).toBeLessThanOrEqual(165);
    }
    const header = tableOf(sweepOut)[0];
    expect(header).toEqual(['Benchmark', 'req/s', 'Latency (s)', 'TTFT (ms)', 'ITL (ms)', 'Output tok/s', 'TTFT p99 (ms)', 'ITL p99 (ms)', 'ok/sent', 'Failed', 'Met SLO']);
    // Cells are plain numbers: the unit is in the header.
    for (const row of tableOf(sweepOut).slice(1)) expect(row[1]).toMatch(/^\d+\.\d\d$/);
    const md = readFileSync(join(sweepDir, 'table.md'), 'utf8');
    expect(md).toContain('**Qwen2-7B-Instruct**');
    expect(md.replace(/ +/g, ' ')).toContain('| Benchmark | Requests per Second | Request Latency | Time to First Token | Inter Token Latency | Output Token Throughput |');
  });

  it('prints the window rules once, in one short line', () => {
    for (const out of [sweepOut, gridOut]) {
      const lines = out.split('\n').filter((l) => l.startsWith('window:'));
      expect(lines).toHaveLength(1);
      expect((lines[0] ?? '').length).toBeLessThan(260);
      expect(lines[0]).toContain('summary.json windowRules');
    }
    const full = (JSON.parse(readFileSync(join(sweepDir, 'summary.json'), 'utf8')) as { windowRules: string }).windowRules;
    expect(full.length).toBeGreaterThan(400); // the full text stays in the file
  });

  it('grid runs: the GPU count in the header, the grid workload (not --prompt-tokens), TTFT and ITL columns', () => {
    const first = gridOut.split('\n')[0] ?? '';
    expect(first).toContain('1× A100-80GB');
    expect(first).toContain('grid of input lengths 128, 512 × output lengths 64, 256');
    expect(gridOut).not.toContain('prompt_tokens=512');
    expect(readFileSync(join(gridDir, 'table.md'), 'utf8')).toContain('## 1× A100-80GB');
    const [header, ...rows] = tableOf(gridOut);
    expect(header?.slice(0, 8)).toEqual(['Input', 'Output', 'req/s', 'Output tok/s', 'ms/token', 'ms/output token', 'TTFT (ms)', 'ITL (ms)']);
    expect(rows).toHaveLength(4);
    for (const r of rows) {
      expect(Number(r[6])).toBeGreaterThan(0);
      expect(Number(r[7])).toBeGreaterThan(0);
    }
  });

  it('with prediction intervals (the default): mean and throughput cells read `value (low–high)`, p99 cells stay plain, lines stay under 215 columns', async () => {
    const r = await runCli(['predict', '--max-requests', '40', '--sweep-rates', '3', '--slo', 'ttft:100,itl:30']);
    expect(r.code, r.stderr).toBe(0);
    const [header, ...rows] = tableOf(r.stdout);
    const ttft = header?.indexOf('TTFT (ms)') ?? -1;
    const p99 = header?.indexOf('TTFT p99 (ms)') ?? -1;
    for (const row of rows.filter((c) => c[1] !== '—')) {
      expect(row[ttft]).toMatch(/^\d+\.\d\d \(\d+\.\d\d–\d+\.\d\d\)$/);
      expect(row[p99]).toMatch(/^\d+\.\d\d( †)?$/);
    }
    for (const line of r.stdout.split('\n').filter((l) => l.startsWith('|'))) expect(line.length, line).toBeLessThanOrEqual(215);
  });

  it('--columns picks and orders the columns; p50/p90 expand to TTFT and ITL at that percentile', async () => {
    const r = await runCli(['report', sweepDir, '--columns', 'rps,p50,p90,e2e-p99', '--format', 'md', '--out', join(root, 'rep')]);
    expect(r.code, r.stderr).toBe(0);
    expect(tableOf(r.stdout)[0]).toEqual(['Benchmark', 'req/s', 'TTFT p50 (ms)', 'ITL p50 (ms)', 'TTFT p90 (ms)', 'ITL p90 (ms)', 'E2E p99 (ms)']);
    const doc = JSON.parse(readFileSync(join(sweepDir, 'summary.json'), 'utf8')) as RunSummaryDoc;
    const sync = doc.stages.find((s) => s.label === 'synchronous');
    const row = tableOf(r.stdout).find((c) => c[0]?.startsWith('synchronous'));
    const ttft = sync?.metrics.ttftMs;
    expect(row?.[2]).toBe(`${ttft?.median.toFixed(2)}${(ttft?.count ?? 0) < 20 ? ' †' : ''}`);
    const p = await runCli(['predict', '--max-requests', '20', '--sweep-rates', '1', '--columns', 'default,p95']);
    expect(p.code, p.stderr).toBe(0);
    expect(tableOf(p.stdout)[0]?.slice(-2)).toEqual(['TTFT p95 (ms)', 'ITL p95 (ms)']);
  });

  it('an unknown column is one line naming the choices, exit 2, before anything runs', async () => {
    for (const args of [['predict', '--columns', 'rps,nope'], ['report', sweepDir, '--columns', 'p42']]) {
      const r = await runCli(args);
      expect(r.code, args.join(' ')).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^error: --columns .*unknown column .*choose from default, all, p50/);
    }
  });
});

describe('terminal style', () => {
  it('bold is ANSI on a TTY without NO_COLOR, plain text otherwise', () => {
    expect(terminalStyle({ isTTY: true }, {}).bold('x')).toBe('\u001b[1mx\u001b[22m');
    expect(terminalStyle({ isTTY: true }, { NO_COLOR: '1' }).bold('x')).toBe('x');
    expect(terminalStyle({ isTTY: false }, {}).bold('x')).toBe('x');
    expect(fromMarkdown('**WARNING: a** and \\* overloaded', terminalStyle({ isTTY: false }, {}))).toBe('WARNING: a and * overloaded');
  });

  it('renderTerminalReport bolds the model on a TTY and never prints asterisks', () => {
    const doc = JSON.parse(readFileSync(join(sweepDir, 'summary.json'), 'utf8')) as RunSummaryDoc;
    const text = renderTerminalReport(doc, { style: terminalStyle({ isTTY: true }, {}) });
    expect(text.split('\n')[0]).toMatch(/^\u001b\[1mQwen2-7B-Instruct\u001b\[22m/);
    expect(text).not.toContain('**');
  });

  it('column names: case-insensitive, groups and default expand per layout, SLO column only where measured', () => {
    expect(parseColumns('RPS, P99')).toEqual(['rps', 'p99']);
    const doc = JSON.parse(readFileSync(join(gridDir, 'summary.json'), 'utf8')) as RunSummaryDoc;
    expect(resolveColumns(['p99', 'ttft-p99', 'default'], 'grid', doc.stages).map((c) => c.name)).toEqual([
      'ttft-p99', 'itl-p99', 'rps', 'tokens', 'per-token', 'per-output-token', 'ttft', 'itl', 'ok', 'failed',
    ]);
    const sweep = JSON.parse(readFileSync(join(sweepDir, 'summary.json'), 'utf8')) as RunSummaryDoc;
    expect(resolveColumns(undefined, 'sweep', sweep.stages).map((c) => c.name)).toContain('slo');
  });
});
