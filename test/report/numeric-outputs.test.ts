import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummaryDoc } from '../../src/report/run-summary.js';
import { openRunDir } from '../../src/store/run-store.js';
import { runCli } from '../helpers/cli.js';

const root = mkdtempSync(join(tmpdir(), 'ib-numeric-'));
const dirs = { sweepA: join(root, 'sweep-vllm'), sweepB: join(root, 'sweep-sglang'), grid: join(root, 'grid'), dist: join(root, 'dist') };

/** A CSV without quoted fields (these have none) as header → cell maps. */
function csvRows(path: string): Record<string, string>[] {
  const [head, ...lines] = readFileSync(path, 'utf8').trim().split('\n');
  const headers = (head ?? '').split(',');
  return lines.map((l) => Object.fromEntries(l.split(',').map((c, i) => [headers[i] ?? '', c])));
}

const summary = (dir: string): RunSummaryDoc => JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as RunSummaryDoc;

beforeAll(async () => {
  const sweep = ['--max-requests', '40', '--sweep-rates', '2', '--slo', 'ttft:100'];
  const results = await Promise.all([
    runCli(['predict', ...sweep, '--engine', 'vllm', '--out', dirs.sweepA]),
    runCli(['predict', ...sweep, '--engine', 'sglang', '--out', dirs.sweepB]),
    runCli(['predict', '--profile', 'grid', '--input-lens', '128,512', '--output-lens', '64,128', '--num-prompts', '20', '--out', dirs.grid]),
    runCli(['predict', '--prompt-dist', 'uniform:100,900', '--output-dist', 'normal:128,16', '--max-requests', '20', '--sweep-rates', '1', '--out', dirs.dist]),
  ]);
  for (const r of results) expect(r.code, r.stderr).toBe(0);
}, 60_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('table.csv: one number per cell, units in the headers', () => {
  it('sweep: every figure column parses as a number and equals summary.json', () => {
    const rows = csvRows(join(dirs.sweepA, 'table.csv'));
    const doc = summary(dirs.sweepA);
    expect(Object.keys(rows[0] ?? {}).slice(0, 8)).toEqual(['row', 'kind', 'target_rate_rps', 'concurrency', 'requests_per_s', 'send_rate_rps', 'output_tokens_per_s', 'prompt_tokens_per_s']);
    for (const h of ['ttft_mean_ms', 'ttft_p50_ms', 'ttft_p90_ms', 'ttft_p95_ms', 'ttft_p99_ms', 'itl_p99_ms', 'e2e_p99_ms', 'n_ok', 'n_failed', 'slo_attainment_pct']) expect(rows[0]).toHaveProperty(h);
    expect(rows).toHaveLength(doc.stages.length);
    for (const row of rows) {
      for (const [h, cell] of Object.entries(row)) {
        if (h === 'row' || h === 'kind' || cell === '') continue;
        expect(Number.isFinite(Number(cell)), `${h}=${cell}`).toBe(true);
      }
      const s = doc.stages.find((x) => x.label === row['row']);
      expect(Number(row['requests_per_s'])).toBeCloseTo(s?.requestThroughput ?? Number.NaN, 6);
      expect(Number(row['ttft_p99_ms'])).toBeCloseTo(s?.metrics.ttftMs?.p99 ?? Number.NaN, 6);
      expect(Number(row['n_ok'])).toBe(s?.requests.ok);
    }
    const sync = rows.find((r) => r['row'] === 'synchronous');
    expect(sync?.['target_rate_rps']).toBe('');
    expect(sync?.['concurrency']).toBe('1');
  });

  it('grid: input and output lengths, burst throughput, latency-pass latencies and counts', () => {
    const rows = csvRows(join(dirs.grid, 'table.csv'));
    expect(rows.map((r) => `${r['input_tokens']}/${r['output_tokens']}`)).toEqual(['128/64', '128/128', '512/64', '512/128']);
    const doc = summary(dirs.grid);
    const burst = doc.stages.find((s) => s.label === '512/128');
    const pass = doc.stages.find((s) => s.label === '512/128 latency');
    const row = rows[3] ?? {};
    expect(Number(row['requests_per_s'])).toBeCloseTo(burst?.requestThroughput ?? Number.NaN, 6);
    expect(Number(row['ttft_mean_ms'])).toBeCloseTo(pass?.metrics.ttftMs?.mean ?? Number.NaN, 6);
    expect(row['n_ok']).toBe('20');
    expect(row['latency_pass_n_ok']).toBe(String(pass?.requests.ok));
    for (const [h, cell] of Object.entries(row)) if (cell !== '') expect(Number.isFinite(Number(cell)), h).toBe(true);
  });

  it('compare.csv stacks the runs numerically; compare.json gives the verdict as numbers with units', async () => {
    const out = join(root, 'cmp');
    const r = await runCli(['compare', dirs.sweepA, dirs.sweepB, '--slo', 'ttft:100', '--gpu-hour-price', '2', '--format', 'csv,json', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const rows = csvRows(join(out, 'compare.csv'));
    expect(Object.keys(rows[0] ?? {}).slice(0, 3)).toEqual(['run', 'row', 'kind']);
    expect(new Set(rows.map((x) => x['run'])).size).toBe(2);
    const json = JSON.parse(readFileSync(join(out, 'compare.json'), 'utf8')) as { verdict: { lines: string[]; figures: Record<string, unknown>[] } };
    expect(json.verdict.lines.length).toBeGreaterThan(0); // the prose stays
    expect(json.verdict.figures).toHaveLength(2);
    for (const f of json.verdict.figures) {
      expect(typeof f['run']).toBe('string');
      expect(typeof f['peakOutputTokensPerS']).toBe('number');
      expect(typeof f['commonRateRequestsPerS']).toBe('number');
      expect(typeof f['ttftMeanMsAtCommonRate']).toBe('number');
      expect(f['gpuHourPriceUsd']).toBe(2);
      expect(f).toHaveProperty('sloHighestRequestsPerS');
      expect(f).toHaveProperty('costUsdPerMillionOutputTokens');
    }
  });
});

describe('summary.json workloadSpec', () => {
  it('gives the workload as fields beside the prose, and an older summary without it still loads', () => {
    const fixed = summary(dirs.sweepA);
    expect(typeof fixed.workload).toBe('string');
    expect(fixed.workloadSpec).toMatchObject({ kind: 'synthetic', promptTokens: { kind: 'fixed', value: 512 }, outputTokens: { kind: 'fixed', value: 128 } });
    expect(summary(dirs.dist).workloadSpec).toMatchObject({ kind: 'synthetic', promptTokens: { kind: 'uniform', min: 100, max: 900 }, outputTokens: { kind: 'normal', mean: 128, stddev: 16 } });
    expect(summary(dirs.grid).workloadSpec).toMatchObject({ kind: 'grid', inputLens: [128, 512], outputLens: [64, 128], numPrompts: 20 });
    expect(openRunDir(dirs.dist).summary.workloadSpec?.promptTokens).toEqual({ kind: 'uniform', min: 100, max: 900 });

    const old = join(root, 'old');
    cpSync(dirs.sweepA, old, { recursive: true });
    const { workloadSpec: _dropped, ...before } = summary(old) as RunSummaryDoc & { workloadSpec?: unknown };
    writeFileSync(join(old, 'summary.json'), JSON.stringify(before));
    const run = openRunDir(old);
    expect(run.summary.workloadSpec).toBeUndefined();
    expect(run.summary.workload).toBe(fixed.workload);
  });
});
