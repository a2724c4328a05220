import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CALIBRATION } from '../src/sim/calibrate/constants.js';
import { corpusScenarios, loadCorpus } from '../src/sim/calibrate/corpus.js';
import type { CorpusRow } from '../src/sim/calibrate/corpus-names.js';
import { Evaluator } from '../src/sim/calibrate/evaluator.js';
import { fitCalibration, onlyMatches } from '../src/sim/calibrate/fit.js';
import { buildParams, describeScenario, MIN_ROWS } from '../src/sim/calibrate/params.js';
import { PRIORS } from '../src/sim/calibrate/priors.js';
import { recordReplay, replaySummary } from '../src/sim/calibrate/replay.js';
import { resolveSimEngine } from '../src/sim/create.js';
import { simulateScenario, startableEngine } from '../src/sim/seed-compare.js';
import { runCli } from './helpers/cli.js';

const rows = loadCorpus();
const pick = (ids: number[]): CorpusRow[] => rows.filter((r) => ids.includes(r.id));
const ids = (table: string, n: number): number[] => rows.filter((r) => r.tableGroup.startsWith(table)).slice(0, n).map((r) => r.id);

describe('public tables as simulator scenarios', () => {
  it('maps each load kind to its stage and each statistic to its figure', () => {
    const { scenarios, skipped } = corpusScenarios(pick([...ids('T02', 1), ...ids('T06', 1), ...ids('T09', 1), ...ids('T13', 1), ...ids('T01', 1)]));
    expect(skipped).toEqual([]);
    const kinds = scenarios.map((s) => `${s.group}:${s.stage.kind}`);
    expect(kinds).toEqual(expect.arrayContaining(['T02:open', 'T06:closed', 'T09:closed', 'T13:open', 'T01:burst']));
    const t13 = scenarios.find((s) => s.group === 'T13');
    expect(t13?.metrics.map((m) => m.metric)).toEqual(expect.arrayContaining(['TTFT p50', 'TPOT p50']));
    // ShareGPT rows draw lengths around the stated totals (22,925 prompt tokens over 100 requests).
    const items = Array.from({ length: 400 }, (_, i) => t13?.stage.workload.item(i).promptTokens ?? 0);
    const mean = items.reduce((a, b) => a + b, 0) / items.length;
    expect(mean).toBeGreaterThan(180);
    expect(mean).toBeLessThan(280);
  });

  it('a vLLM deployment that would not start at the full context is simulated at the largest context that starts', () => {
    // Qwen2.5-32B bf16 on one A100-80GB: the profiling prefill of a 32k context leaves no KV cache, so vLLM refuses to
    // start there; Qwen's speed table measured it, so its context was lower.
    const full = { engine: 'vllm-v0', model: 'Qwen2.5-32B-Instruct', gpu: 'A100-80GB', gpus: 1 };
    expect(() => resolveSimEngine(full)).toThrow(/does not fit/);
    const started = startableEngine(full, 6144 + 2048);
    expect(started.maxModelLen).toBeGreaterThanOrEqual(8192);
    const d = resolveSimEngine(started).description;
    expect(d.kvTokens).toBeGreaterThanOrEqual(d.maxModelLen);
    // Those rows are simulated now, not skipped.
    const { scenarios, skipped } = corpusScenarios(pick([693, 717]));
    expect(skipped).toEqual([]);
    expect(scenarios.every((s) => Number.isFinite(simulateScenario(s).outTokPerS))).toBe(true);
    // A configuration that starts as it is, and an engine that lowers its context itself (TGI), keep their options.
    const fits = { engine: 'vllm-v0', model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1 };
    expect(startableEngine(fits, 640)).toBe(fits);
    const tgi = { engine: 'tgi', model: 'Qwen2-72B-Instruct', gpu: 'L20-48GB', gpus: 4 };
    expect(startableEngine(tgi, 640)).toBe(tgi);
  });

  it('vLLM V0 above a 32K context prefills in 512-token chunks (0.5.4 on), so a 128K prompt fits; 0.4.x does not', () => {
    const long = { engine: 'vllm-v0', model: 'Qwen2.5-32B-Instruct-AWQ', gpu: 'A100-80GB', gpus: 1, maxModelLen: 131072 };
    const chunked = resolveSimEngine(long);
    expect(chunked.profile.policy).toBe('mixed');
    expect(chunked.profile.chunkedPrefill).toBe(true);
    expect(chunked.description.maxNumBatchedTokens).toBe(512);
    expect(chunked.description.kvTokens).toBeGreaterThanOrEqual(131072);
    // Without it the profiling pass prefills the whole context and leaves a third of that to the KV cache.
    const whole = resolveSimEngine({ ...long, chunkedPrefill: false });
    expect(whole.profile.policy).toBe('prompt-first');
    expect(whole.description.kvTokens).toBeLessThan(131072 / 2);
    // At 32K and below the default is unchanged.
    expect(resolveSimEngine({ ...long, maxModelLen: 32768 }).profile.policy).toBe('prompt-first');
    // Qwen's speed table ran the 129,024-token prompt on 0.6.3 (simulated now); the 0.4.2 rows keep prompt-first.
    const { scenarios } = corpusScenarios(pick([716]));
    const s716 = scenarios[0];
    expect(s716 && simulateScenario(s716).outTokPerS).toBeGreaterThan(5);
    const t10 = corpusScenarios(pick(rows.filter((r) => r.tableGroup.startsWith('T10') && r.inputTokens === 129024).map((r) => r.id))).scenarios;
    expect(t10.length).toBeGreaterThan(0);
    expect(t10.every((sc) => sc.engine.chunkedPrefill === false)).toBe(true);
  });

  it('TensorRT-LLM behind Triton adds its host time to every step (own constants); trtllm-serve overlaps it', () => {
    const opts = { model: 'Llama-3.1-8B-Instruct', gpu: 'H100', gpus: 1 };
    const triton = resolveSimEngine({ ...opts, engine: 'triton' });
    const serve = resolveSimEngine({ ...opts, engine: 'trtllm' });
    expect(triton.profile.calKey).toBe('triton');
    const batch = { decodeSeqs: 64, decodeCtxSum: 64 * 700, prefillCount: 0, prefillPrior: [], prefillTokens: [], emittingSeqs: 64 };
    const t = triton.config.cost.breakdown(batch);
    const gpu = t.linear + t.attention + t.elementwise + t.comm + t.head;
    expect(t.total).toBeCloseTo(gpu + t.host, 6);
    const s = serve.config.cost.breakdown(batch);
    expect(s.total).toBeLessThan(s.linear + s.attention + s.elementwise + s.comm + s.head + s.host);
  });

  it('the kernels option: legacy runs the quantization\'s own GEMMs (legacy:awq constants), slower than Marlin\'s', () => {
    const sc = corpusScenarios(rows.filter((r) => r.tableGroup.startsWith('T10') && /awq/i.test(`${r.quant} ${r.model}`)).slice(0, 1)).scenarios[0];
    if (!sc) throw new Error('no T10 AWQ row');
    expect(sc.engine.kernels).toBeUndefined();
    expect(describeScenario(sc)?.quant).toBe('modern:awq');
    const legacy = { ...sc, engine: { ...sc.engine, kernels: 'legacy' as const } };
    expect(describeScenario(legacy)?.quant).toBe('legacy:awq');
    expect(simulateScenario(sc).outTokPerS).toBeGreaterThan(simulateScenario(legacy).outTokPerS * 1.1);
  });

  it('MoE on vLLM 0.4.2 (untuned fused-MoE kernels) takes the shared etaMoe; later vLLM V0 rows fit their own', () => {
    const moe = corpusScenarios(rows.filter((r) => /57B-A14B/.test(r.model) && (r.tableGroup.startsWith('T10') || r.tableGroup.startsWith('T11')))).scenarios;
    const later = corpusScenarios(rows.filter((r) => r.tableGroup.startsWith('T19') && /Mixtral/.test(r.model))).scenarios;
    expect(moe.length).toBeGreaterThanOrEqual(3);
    expect(moe.every((sc) => sc.engine.kernels === 'legacy')).toBe(true);
    const params = buildParams([...moe, ...later]);
    const own = params.find((p) => p.key === 'vllm-v0.etaMoe');
    const shared = params.find((p) => p.key === 'etaMoe');
    expect(moe.some((sc) => own?.affects(sc))).toBe(false);
    expect(moe.every((sc) => shared?.affects(sc))).toBe(true);
    expect(later.every((sc) => own?.affects(sc) && !shared?.affects(sc))).toBe(true);
  });

  it('a replayed schedule reproduces the full simulation under another calibration', () => {
    const { scenarios } = corpusScenarios(pick([...ids('T22', 1), ...ids('T09', 1)]));
    const burst = corpusScenarios(pick(ids('T20', 2))).scenarios;
    for (const sc of [...scenarios, ...burst]) {
      const rec = recordReplay(sc, DEFAULT_CALIBRATION);
      expect(rec.trace, sc.row).toBeDefined();
      const trace = rec.trace;
      if (!trace) continue;
      const replayed = replaySummary(trace, resolveSimEngine({ ...sc.engine, calibration: PRIORS }));
      const full = simulateScenario({ ...sc, engine: { ...sc.engine, calibration: PRIORS } });
      for (const k of ['outTokPerS', 'ttftMs', 'itlMs', 'latencyS', 'reqPerS'] as const) {
        expect(replayed[k], `${sc.row} ${k}`).toBeCloseTo(full[k], 6);
      }
    }
  });

  it('fits a shared constant on a small subset, and leaves a constant one row informs at its prior', () => {
    const { scenarios } = corpusScenarios(pick(ids('T23', 5)));
    const params = buildParams(scenarios).map((p) => p.key);
    expect(params).toContain('RTX-4090.etaM');
    expect(buildParams(scenarios.slice(0, MIN_ROWS - 1))).toEqual([]);
    const ev = new Evaluator();
    const before = ev.points(scenarios, DEFAULT_CALIBRATION);
    const cal = fitCalibration(scenarios, DEFAULT_CALIBRATION, { passes: 1, iters: 3, only: ['vllm-v1.tApiMs', 'RTX-4090.etaM'], evaluator: ev });
    const after = ev.points(scenarios, cal);
    const loss = (pts: typeof before): number => pts.reduce((a, p) => a + Math.log(p.predicted / p.published) ** 2, 0);
    expect(loss(after)).toBeLessThan(loss(before));
  });

  it('fit.ts --only takes whole keys and prefixes: every constant of one GPU, not another GPU whose name begins alike', () => {
    expect(onlyMatches('RTX-4090.etaM', ['RTX-4090'])).toBe(true);
    expect(onlyMatches('RTX-4090.etaM', ['RTX-4090.etaM'])).toBe(true);
    expect(onlyMatches('RTX-4090.etaC', ['RTX-4090.etaM'])).toBe(false);
    expect(onlyMatches('A100-80GB.etaM', ['A100'])).toBe(false);
  });
});

describe('inferbench predict --check FILE', () => {
  it('prints every published figure of a table file beside the prediction', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ib-check-'));
    const file = join(dir, 'rows.json');
    writeFileSync(file, JSON.stringify(pick([...ids('T23', 2), ...ids('T09', 1)])));
    const res = await runCli(['predict', '--check', file]);
    // stderr carries only the progress of the check (issue 36 item 10: a long check said nothing for minutes).
    const progress = res.stderr.split('\n').filter((l) => l !== '');
    expect(progress.length).toBeGreaterThan(0);
    for (const line of progress) expect(line).toMatch(/^predict --check: \d+ of 3 rows simulated \(\d+ s\)$/);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/\|\s*Row\s*\|\s*Metric\s*\|\s*Published\s*\|\s*Predicted\s*\|\s*Error/);
    expect(res.stdout).toMatch(/TTFT \(ms\)\s*\|\s*63\.00/);
    expect(res.stdout).toMatch(/median \|error\|: .* over \d+ calibration figures/);
    const json = await runCli(['predict', '--check', file, '--json']);
    const doc = JSON.parse(json.stdout) as { rows: { published: number; predicted: number }[] };
    expect(doc.rows.length).toBeGreaterThanOrEqual(4);
    expect(doc.rows.every((r) => r.predicted > 0)).toBe(true);
  });

  it('--calibration FILE predicts the published figures under those constants (--check and --seed-file); --calibrate-from is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ib-check-'));
    const file = join(dir, 'rows.json');
    writeFileSync(file, JSON.stringify(pick(ids('T23', 2))));
    // The RTX 4090 at half its shipped memory efficiency: every memory-bound figure of T23 moves.
    const slow = join(dir, 'slow.json');
    const hw = DEFAULT_CALIBRATION.hardware['RTX-4090'];
    if (!hw) throw new Error('no RTX-4090 constants');
    writeFileSync(slow, JSON.stringify({ hardware: { 'RTX-4090': { ...hw, etaM: hw.etaM / 2 } } }));
    type Doc = { calibration?: string; rows: { metric: string; row: string; predicted: number }[] };
    const shipped = JSON.parse((await runCli(['predict', '--check', file, '--json'])).stdout) as Doc;
    const res = await runCli(['predict', '--check', file, '--json', '--calibration', slow]);
    expect(res.code).toBe(0);
    const moved = JSON.parse(res.stdout) as Doc;
    expect(moved.calibration).toBe(slow);
    expect(shipped.calibration).toBeUndefined();
    const tok = (d: Doc): number[] => d.rows.filter((r) => r.metric.startsWith('output tok/s')).map((r) => r.predicted);
    expect(tok(moved).length).toBeGreaterThan(0);
    tok(moved).forEach((v, i) => expect(v).toBeLessThan((tok(shipped)[i] as number) * 0.8));
    const text = await runCli(['predict', '--check', file, '--calibration', slow]);
    expect(text.stdout).toMatch(new RegExp(`constants: ${slow.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(--calibration\\)`));
    // A seed file too: seed 004's per-token latencies (A100-40GB) under a slower A100-40GB.
    const a100 = DEFAULT_CALIBRATION.hardware['A100-40GB'];
    if (!a100) throw new Error('no A100-40GB constants');
    const slowA100 = join(dir, 'slow-a100.json');
    writeFileSync(slowA100, JSON.stringify({ hardware: { 'A100-40GB': { ...a100, etaM: a100.etaM / 2 } } }));
    const seed = 'data/seeds/004_44f3a8b9f2336bbb.txt';
    const seedShipped = JSON.parse((await runCli(['predict', '--seed-file', seed, '--json'])).stdout) as Doc;
    const seedMoved = JSON.parse((await runCli(['predict', '--seed-file', seed, '--json', '--calibration', slowA100])).stdout) as Doc;
    expect(seedMoved.calibration).toBe(slowA100);
    const itl = (d: Doc): number[] => d.rows.filter((r) => r.metric === 'latency/output token').map((r) => r.predicted);
    expect(itl(seedMoved).length).toBeGreaterThan(0);
    itl(seedMoved).forEach((v, i) => expect(v).toBeGreaterThan((itl(seedShipped)[i] as number) * 1.3));
    const refused = await runCli(['predict', '--seed-file', seed, '--calibrate-from', 'x']);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/--calibrate-from fits one deployment/);
  });

  it('a file that is not a table file is one line, exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ib-check-'));
    const file = join(dir, 'bad.json');
    writeFileSync(file, '[{"x": 1}]');
    const res = await runCli(['predict', '--check', file]);
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(/not a public-table file/);
    expect(readFileSync(file, 'utf8')).toBe('[{"x": 1}]');
  });
});
