import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { runIdOf } from '../../src/store/run-store.js';
import { makeFixtures, type Fixtures } from './fixtures.js';

let fx: Fixtures;
beforeAll(async () => {
  fx = await makeFixtures({ sweeps: true });
}, 60_000);
afterAll(() => rmSync(fx.root, { recursive: true, force: true }));

const PNG_MAGIC = '89504e470d0a1a0a';
const isPng = (p: string): boolean => readFileSync(p).subarray(0, 8).toString('hex') === PNG_MAGIC;
const oneLineError = (stderr: string): string => {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0] as string;
};

describe('inferbench ls', () => {
  it('lists every saved run with its id, and filters', async () => {
    const all = await runCli(['ls', '--results', fx.results]);
    expect(all.code, all.stderr).toBe(0);
    for (const dir of [fx.gridVllm, fx.gridTgi, ...fx.sweeps]) expect(all.stdout).toContain(runIdOf(dir.split('/').pop()!));
    expect(all.stdout).toMatch(/\|\s+ID\s+\|\s+Created \(UTC\)\s+\|/);
    expect(all.stderr).toContain('5 runs');

    const tgi = await runCli(['ls', '--results', fx.results, '--engine', 'tgi']);
    expect(tgi.stdout).toContain('20261102-100000-grid-tgi');
    expect(tgi.stdout).not.toContain('grid-vllm');
    const gpu = await runCli(['ls', '--results', fx.results, '--gpu', 'L20', '--json']);
    const listed = JSON.parse(gpu.stdout) as { name: string; layout: string }[];
    expect(listed.map((r) => r.layout)).toEqual(['sweep', 'sweep', 'sweep']);
    const future = await runCli(['ls', '--results', fx.results, '--since', '2999-01-01']);
    expect(future.code).toBe(0);
    expect(future.stderr).toContain('no run in');
  });

  it('rejects a bad --since in one line, exit 2', async () => {
    const r = await runCli(['ls', '--results', fx.results, '--since', 'yesterdayish']);
    expect(r.code).toBe(2);
    expect(oneLineError(r.stderr)).toContain('--since "yesterdayish" is not a date');
  });
});

describe('inferbench report', () => {
  it('re-renders a saved run by id: seed table on stdout, md/csv/json/svg files', async () => {
    const out = join(fx.root, 'report-one');
    const id = runIdOf('20261101-100000-grid-vllm');
    const r = await runCli(['report', id, '--results', fx.results, '--format', 'md,csv,json,svg', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    // The terminal: the compact table, no Markdown markup; report.md: the seed layout.
    expect(r.stdout).toMatch(/^\| Input +\| Output +\| +req\/s \| +Output tok\/s \|/m);
    expect(r.stdout).not.toContain('**');
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toMatch(/\|\s+Input Length\s+\|\s+Output Length\s+\|\s+Throughput \(requests\/s\)\s+\|/);
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain(readFileSync(join(fx.gridVllm, 'table.md'), 'utf8').split('\n')[4]);
    expect(readFileSync(join(out, 'table.csv'), 'utf8')).toBe(readFileSync(join(fx.gridVllm, 'table.csv'), 'utf8'));
    const json = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as { schemaVersion: number; runs: { id: string }[] };
    expect(json.schemaVersion).toBe(1);
    expect(json.runs[0]?.id).toBe(id);
    const svg = readFileSync(join(out, 'throughput-req.svg'), 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('Throughput (requests/s)');
    // One panel per input length, the output lengths on each panel's axis.
    expect(svg).toContain('input 512');
    expect(svg).toContain('font-family="DejaVu Sans"');
    expect(svg.match(/<path[^>]*aria-roledescription="bar"/g)?.length).toBe(4);
    expect(existsSync(join(out, 'report.html'))).toBe(false);
  });

  it('one-line errors, exit 2: unknown run id, unknown format, corrupt summary', async () => {
    const unknown = await runCli(['report', 'cafe1234', '--results', fx.results]);
    expect(unknown.code).toBe(2);
    expect(oneLineError(unknown.stderr)).toMatch(/unknown run "cafe1234".*inferbench ls --results/);
    const fmt = await runCli(['report', fx.gridVllm, '--format', 'md,pdf']);
    expect(fmt.code).toBe(2);
    expect(oneLineError(fmt.stderr)).toContain('unknown format "pdf"');
    const broken = join(fx.root, 'broken-run');
    mkdirSync(broken, { recursive: true });
    writeFileSync(join(broken, 'summary.json'), '{"schemaVersion":1,');
    const bad = await runCli(['report', broken]);
    expect(bad.code).toBe(2);
    expect(oneLineError(bad.stderr)).toContain('summary.json is not valid JSON');
  });
});

describe('inferbench compare', () => {
  it('two grid runs: the seed-004 table pair with deltas, a verdict and the four PNGs', async () => {
    const out = join(fx.root, 'cmp-grid');
    const r = await runCli(['compare', fx.gridVllm, runIdOf('20261102-100000-grid-tgi'), '--results', fx.results, '--gpu-hour-price', '2', '--format', 'md,csv,png,svg', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const md = readFileSync(join(out, 'compare.md'), 'utf8');
    expect(md).toBe(r.stdout);
    expect(md.match(/\|\s+Input Length\s+\|\s+Output Length\s+\|\s+Throughput \(requests\/s\)\s+\|/g)).toHaveLength(2);
    expect(md).toContain('## vllm-v1 · 1×A100-80GB · fp16 (predicted)');
    expect(md).toContain('## tgi · 1×A100-80GB · fp16 · tgi-baseline (predicted)');
    expect(md).toContain('Δ output tok/s vs 1st');
    expect(md).toMatch(/Most output tokens\/s over the 4 common cells: vllm-v1/);
    expect(md).toMatch(/\$0\.\d{3} \(1 GPU\)/);
    for (const name of ['throughput-req', 'throughput-token-out', 'pertoken', 'per-out-token']) {
      expect(isPng(join(out, `${name}.png`)), name).toBe(true);
      const svg = readFileSync(join(out, `${name}.svg`), 'utf8');
      expect(svg).toContain('vllm-v1 · 1×A100-80GB · fp16 (predicted)');
      expect(svg).toContain('tgi · 1×A100-80GB · fp16 · tgi-baseline (predicted)');
      expect(svg.match(/aria-roledescription="bar"/g)?.length).toBe(8);
    }
    const csv = readFileSync(join(out, 'compare.csv'), 'utf8').trim().split('\n');
    expect(csv[0]).toMatch(/^run,input_tokens,output_tokens,requests_per_s,/);
    expect(csv).toHaveLength(9);
  });

  it('three sweeps: seed-003 tables, verdict with SLO and cost, latency-vs-throughput PNGs', async () => {
    const out = join(fx.root, 'cmp-sweep');
    const r = await runCli(['compare', ...fx.sweeps, '--slo', 'ttft:2000,itl:200', '--gpu-hour-price', '1.5', '--format', 'md,json,png,svg', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.match(/\|\s+Benchmark\s+\|\s+Requests per Second\s+\|\s+Request Latency\s+\|\s+Time to First Token\s+\|/g)).toHaveLength(3);
    // Markdown bold stays in compare.md; the terminal (not a TTY here) gets plain text.
    expect(r.stdout).toContain('- Qwen2-72B-Instruct (awq), 4×L20-48GB');
    expect(r.stdout).not.toContain('**');
    expect(readFileSync(join(out, 'compare.md'), 'utf8')).toContain('- **Qwen2-72B-Instruct** (awq), **4**×**L20-48GB**');
    expect(r.stdout).toContain('Δ TTFT vs 1st @ same load');
    expect(r.stdout).toMatch(/\|\s+Run\s+\|\s+Highest req\/s meeting SLO\s+\|\s+Output tok\/s at saturation\s+\|\s+TTFT mean @ [\d.]+ req\/s\s+\|/);
    expect(r.stdout).toContain('Most output tokens/s at saturation:');
    expect(r.stdout).toMatch(/Cheapest per output token: .* per 1M/);
    const json = JSON.parse(readFileSync(join(out, 'compare.json'), 'utf8')) as { commonRate: number; verdict: { runs: { costPerMillion: number }[] } };
    expect(json.commonRate).toBeGreaterThan(0);
    expect(json.verdict.runs).toHaveLength(3);
    for (const metric of ['ttft', 'itl', 'e2e']) {
      for (const axis of ['req-rate', 'token-rate']) {
        expect(isPng(join(out, `${metric}-vs-${axis}.png`))).toBe(true);
        const svg = readFileSync(join(out, `${metric}-vs-${axis}.svg`), 'utf8');
        expect(svg).toContain('lmdeploy · 4×L20-48GB · awq (predicted)');
        expect(svg).toContain('p99');
        expect(svg.match(/aria-roledescription="line mark"/g)?.length ?? 0).toBeGreaterThanOrEqual(6);
      }
    }
  });

  it('refuses one run, mixed layouts and a bad --slo, each in one line with exit 2', async () => {
    const one = await runCli(['compare', fx.gridVllm]);
    expect(one.code).toBe(2);
    expect(oneLineError(one.stderr)).toContain('at least two runs');
    const mixed = await runCli(['compare', fx.gridVllm, fx.sweeps[0]!, '--out', join(fx.root, 'never')]);
    expect(mixed.code).toBe(2);
    expect(oneLineError(mixed.stderr)).toContain('one layout');
    const slo = await runCli(['compare', fx.gridVllm, fx.gridTgi, '--slo', 'ttft=5']);
    expect(slo.code).toBe(2);
    expect(oneLineError(slo.stderr)).toContain('--slo');
  });
});
