import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { StageSummary } from '../../src/metrics/summary.js';
import { modelKey, runMismatches } from '../../src/report/comparability.js';
import { saturationOf } from '../../src/report/saturation.js';
import type { StoredRun } from '../../src/store/run-store.js';
import { costPerMillion } from '../../src/report/verdict.js';
import { runCli } from '../helpers/cli.js';

/** Saved runs made by `predict --out` (virtual time, about a second each). */
const root = mkdtempSync(join(tmpdir(), 'ib-compare-like-'));
const SWEEP = ['--profile', 'sweep', '--max-requests', '40', '--sweep-rates', '2'];
const LOW_RATES = ['--profile', 'constant', '--rate', '1,2', '--max-requests', '30'];
const runs: Record<string, string> = {};

async function predict(name: string, args: string[]): Promise<void> {
  const out = join(root, name);
  const r = await runCli(['predict', ...args, '--out', out]);
  expect(r.code, r.stderr).toBe(0);
  runs[name] = out;
}

const oneLineError = (stderr: string): string => {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0] ?? '';
};

beforeAll(async () => {
  await Promise.all([
    predict('vllm-8b', [...SWEEP, '--model', 'Llama-3.1-8B-Instruct', '--engine', 'vllm']),
    predict('sglang-8b', [...SWEEP, '--model', 'Llama-3.1-8B-Instruct', '--engine', 'sglang']),
    predict('vllm-70b', [...SWEEP, '--model', 'Llama-3.1-70B-Instruct', '--engine', 'vllm', '--gpus', '4']),
    predict('vllm-8b-long', [...SWEEP, '--model', 'Llama-3.1-8B-Instruct', '--engine', 'vllm', '--prompt-tokens', '2048', '--output-tokens', '256']),
    predict('vllm-8b-low', [...LOW_RATES, '--model', 'Llama-3.1-8B-Instruct', '--engine', 'vllm']),
    predict('sglang-8b-low', [...LOW_RATES, '--model', 'Llama-3.1-8B-Instruct', '--engine', 'sglang']),
  ]);
}, 120_000);

describe('compare refuses runs that do not measure the same thing', () => {
  it('a model is the same model under another organisation prefix or quantization tag, not at another size', () => {
    const same = ['Qwen/Qwen2-72B-Instruct-AWQ', 'Qwen2-72B-Instruct-GPTQ-Int8', 'Qwen2-72B-Instruct', 'qwen2-72b-instruct-fp8'];
    expect(new Set(same.map(modelKey)).size).toBe(1);
    expect(modelKey('meta-llama/Meta-Llama-3.1-8B-Instruct')).toBe(modelKey('Llama-3.1-8B-Instruct-Q4_K_M.gguf'));
    expect(modelKey('Llama-3.1-8B-Instruct')).not.toBe(modelKey('Llama-3.1-70B-Instruct'));
  });

  it('different models: exit 2, one line naming the model of each run and the override', async () => {
    const r = await runCli(['compare', runs['vllm-8b']!, runs['vllm-70b']!, '--out', join(root, 'never')]);
    expect(r.code).toBe(2);
    const line = oneLineError(r.stderr);
    expect(line).toMatch(/differ in model: Llama-3\.1-8B-Instruct \(run \w+\) vs Llama-3\.1-70B-Instruct \(run \w+\)/);
    expect(line).toContain('--allow-mismatch');
    expect(r.stdout).toBe('');
  });

  it('different prompt/output lengths: exit 2 naming both', async () => {
    const r = await runCli(['compare', runs['vllm-8b']!, runs['vllm-8b-long']!, '--out', join(root, 'never')]);
    expect(r.code).toBe(2);
    expect(oneLineError(r.stderr)).toMatch(/prompt\/output lengths: 512\/128 \(run \w+\) vs 2048\/256 \(run \w+\)/);
  });

  it('different load profiles: exit 2 naming the profile', async () => {
    const r = await runCli(['compare', runs['vllm-8b']!, runs['sglang-8b-low']!, '--out', join(root, 'never')]);
    expect(r.code).toBe(2);
    expect(oneLineError(r.stderr)).toMatch(/profile: sweep \(run \w+\) vs constant \(run \w+\)/);
  });

  it('--allow-mismatch compares anyway, with a WARNING on stderr, atop the report and in compare.json', async () => {
    const out = join(root, 'forced');
    const r = await runCli(['compare', runs['vllm-8b']!, runs['vllm-70b']!, '--allow-mismatch', '--format', 'md,json', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^WARNING: comparing runs that differ in model \(--allow-mismatch\)/m);
    expect(r.stdout.split('\n')[0]).toMatch(/^WARNING: these runs differ in model/);
    const json = JSON.parse(readFileSync(join(out, 'compare.json'), 'utf8')) as { verdict: { lines: string[] } };
    expect(json.verdict.lines[0]).toMatch(/^WARNING: these runs differ in model/);
  });
});

/** A saved run reduced to what the comparability check reads. */
const fakeRun = (id: string, over: { windowRules?: unknown; workload?: string; profile?: string; promptTokens?: number } = {}): StoredRun =>
  ({
    id,
    summary: {
      layout: 'sweep',
      context: { model: 'Llama-3.1-8B-Instruct', engine: 'e', promptTokens: over.promptTokens ?? 512, outputTokens: 128 },
      target: { api: 'openai-chat', engine: 'e', model: 'Llama-3.1-8B-Instruct', simulated: false },
      profile: over.profile ?? 'sweep',
      workload: over.workload ?? 'synthetic prompts of 512 tokens (approx (o200k_base)), 128 output tokens',
      windowRules: over.windowRules ?? 'window: steady; 60 s per row',
      stages: [],
    },
  }) as unknown as StoredRun;

describe('what counts as the same measurement', () => {
  it('window rules compare as a whole (or field by field when stored as fields); shared prefixes matter, the tokenizer name does not', () => {
    expect(runMismatches([fakeRun('a'), fakeRun('b')])).toEqual([]);
    expect(runMismatches([fakeRun('a'), fakeRun('b', { windowRules: 'window: steady; 30 s per row' })]).map((m) => m.field)).toEqual(['window rules']);
    const fields = { warmupS: 5, measureS: 60 };
    expect(runMismatches([fakeRun('a', { windowRules: fields }), fakeRun('b', { windowRules: { measureS: 60, warmupS: 5 } })])).toEqual([]);
    expect(runMismatches([fakeRun('a', { windowRules: fields }), fakeRun('b', { windowRules: { ...fields, measureS: 30 } })]).map((m) => m.field)).toEqual(['window rules']);
    expect(runMismatches([fakeRun('a'), fakeRun('b', { workload: 'synthetic prompts of 512 tokens (server), 128 output tokens' })])).toEqual([]);
    // Datasets and distributions compare by their workload line, without the tokenizer's name.
    const data = (tok: string, n = 200): StoredRun => fakeRun(tok, { promptTokens: Number.NaN, workload: `prompts from chat.jsonl (${n} sampled) (${tok}), output lengths from the file [jsonl, ${n} of 900 entries]` });
    const varied = (r: StoredRun): StoredRun => ({ ...r, summary: { ...r.summary, context: { model: 'Llama-3.1-8B-Instruct', engine: 'e' } } }) as StoredRun;
    expect(runMismatches([varied(data('server')), varied(data('approx (o200k_base)'))])).toEqual([]);
    expect(runMismatches([varied(data('server')), varied(data('server', 100))]).map((m) => m.field)).toEqual(['workload']);
    expect(runMismatches([fakeRun('a'), varied(data('server'))]).map((m) => m.field)).toEqual(['prompt/output lengths']);
    expect(runMismatches([fakeRun('a'), fakeRun('b', { workload: 'synthetic prompts of 512 tokens (x), 128 output tokens, 4 shared prefixes of 256 tokens' })]).map((m) => m.field)).toEqual(['prompt shape']);
  });

  it('saturation is read from the rows: a throughput row, a row behind its target, or a concurrency curve gone flat', () => {
    const row = (label: string, over: Partial<StageSummary>): StageSummary =>
      ({ label, kind: 'closed', requests: { total: 10, ok: 10, errors: 0, incomplete: 0, warmup: 0 }, belowTarget: false, requestThroughput: 1, ...over }) as StageSummary;
    const growing = [row('concurrent@1', { concurrency: 1, requestThroughput: 1 }), row('concurrent@4', { concurrency: 4, requestThroughput: 3.7 })];
    expect(saturationOf(growing).saturated).toBe(false);
    expect(saturationOf([...growing, row('concurrent@16', { concurrency: 16, requestThroughput: 4.1 })])).toMatchObject({ saturated: true, why: expect.stringContaining('barely grew') });
    expect(saturationOf([row('asynchronous@2', { kind: 'open', targetRate: 2, requestThroughput: 2 })]).saturated).toBe(false);
    expect(saturationOf([row('asynchronous@9', { kind: 'open', targetRate: 9, requestThroughput: 6, belowTarget: true })]).saturated).toBe(true);
    expect(saturationOf([row('throughput', { kind: 'burst' })]).saturated).toBe(true);
    // A throughput row where nothing succeeded proves nothing.
    expect(saturationOf([row('throughput', { kind: 'burst', requests: { total: 10, ok: 0, errors: 10, incomplete: 0, warmup: 0 } })]).saturated).toBe(false);
  });
});

describe('the verdict between comparable runs', () => {
  it('same model and workload on two engines: a verdict at saturation (both sweeps have a throughput row)', async () => {
    const r = await runCli(['compare', runs['vllm-8b']!, runs['sglang-8b']!, '--format', 'md', '--out', join(root, 'same')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('WARNING');
    expect(r.stdout).toContain('Most output tokens/s at saturation:');
  });

  it('runs that never saturated are never said to be "at saturation"; their peak is marked as such', async () => {
    const r = await runCli(['compare', runs['vllm-8b-low']!, runs['sglang-8b-low']!, '--gpu-hour-price', '2', '--format', 'md,json', '--out', join(root, 'low')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/at saturation/i);
    expect(r.stdout).toContain('Peak output tok/s (saturated?)');
    expect(r.stdout).toMatch(/Highest output tokens\/s measured: .*Not a capacity comparison: neither run saturated/);
    expect(r.stdout).toMatch(/not saturated: an upper bound/);
    const json = JSON.parse(readFileSync(join(root, 'low', 'compare.json'), 'utf8')) as { verdict: { runs: Array<{ saturated: boolean; saturation?: unknown }> } };
    for (const v of json.verdict.runs) {
      expect(v.saturated).toBe(false);
      expect(v.saturation).toBeUndefined();
    }
  });

  it('with --slo, the cost per 1M tokens is read at the highest load that met the SLO, not at the peak', async () => {
    const out = join(root, 'slo-cost');
    const r = await runCli(['compare', runs['vllm-8b']!, runs['sglang-8b']!, '--slo', 'itl:20', '--gpu-hour-price', '2', '--format', 'md,json', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    type RunJson = { summary: { context: { gpus?: number }; stages: StageSummary[] } };
    type VerdictRun = { sloRate: { row: string } | null; peak: { row: string }; costPerMillion?: number; costAt?: { basis: string; row: string } };
    const json = JSON.parse(readFileSync(join(out, 'compare.json'), 'utf8')) as { runs: RunJson[]; verdict: { runs: VerdictRun[] } };
    let belowPeak = 0;
    json.verdict.runs.forEach((v, i) => {
      const run = json.runs[i]!;
      expect(v.sloRate, 'a row of each run meets ITL p99 ≤ 20 ms').not.toBeNull();
      const row = run.summary.stages.find((s) => s.label === v.sloRate?.row)!;
      expect(v.costAt).toEqual({ basis: 'slo', row: row.label });
      expect(v.costPerMillion).toBeCloseTo(costPerMillion(2, run.summary.context.gpus ?? 1, row.outputTokenThroughput) as number, 9);
      if (row.label !== v.peak.row) belowPeak++;
    });
    // The SLO is tight enough that the priced row is not the flat-out one: the test tells old from new.
    expect(belowPeak).toBeGreaterThan(0);
    expect(r.stdout).toMatch(/Cheapest per output token: .* per 1M \(vs \$[\d.]+\), at the highest load within the SLO\./);
  });
});
