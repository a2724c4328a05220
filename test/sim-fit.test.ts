import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadCalibrationFile } from '../src/sim/calibrate/file.js';
import { DEFAULT_CALIBRATION } from '../src/sim/calibrate/constants.js';
import { corpusScenarios, loadCorpus } from '../src/sim/calibrate/corpus.js';
import type { CorpusRow } from '../src/sim/calibrate/corpus-names.js';
import { Evaluator } from '../src/sim/calibrate/evaluator.js';
import { fitCalibration, fittedKeys, leaveOneTableOut } from '../src/sim/calibrate/fit.js';
import { PRIORS } from '../src/sim/calibrate/priors.js';
import { buildParams, withPriors } from '../src/sim/calibrate/params.js';
import { shareGroups } from '../src/sim/calibrate/loto-jobs.js';
import { recordReplay, replaySummary } from '../src/sim/calibrate/replay.js';
import type { Calibration } from '../src/sim/calibrate/types.js';
import { resolveSimEngine } from '../src/sim/create.js';
import { type SeedScenario, simulateScenario } from '../src/sim/seed-compare.js';

const rows = loadCorpus();
const byId = (ids: number[]): SeedScenario[] => corpusScenarios(rows.filter((r: CorpusRow) => ids.includes(r.id))).scenarios;
const first = (table: string, pred: (r: CorpusRow) => boolean): number => {
  const r = rows.find((x) => x.tableGroup.startsWith(table) && pred(x));
  if (!r) throw new Error(`no ${table} row`);
  return r.id;
};
const FIGURES = ['outTokPerS', 'ttftMs', 'ttftMedianMs', 'itlMs', 'gapMeanMs', 'gapMedianMs', 'latencyS', 'reqPerS'] as const;

/** The shipped constants with every engine 20% slower in its host and API time and every GPU 15% slower to stream. */
function perturbed(): Calibration {
  const c = withPriors(DEFAULT_CALIBRATION);
  for (const h of Object.values(c.hardware)) h.etaM *= 0.85;
  for (const e of Object.values(c.engines)) {
    e.tApiMs *= 1.2;
    e.c0Ms *= 1.2;
  }
  return c;
}

describe('replaying recorded schedules (closed loops with several streams, Poisson rows)', () => {
  // T06: LMDeploy's 16-stream closed loop; T23: 4 streams; T02: a Poisson rate row; T22: ShareGPT at 1 req/s.
  const closed = byId([first('T06', (r) => r.load.value === 16), first('T23', (r) => r.load.value === 4)]);
  const open = byId([first('T02', (r) => r.load.kind === 'rate'), first('T22', (r) => r.load.kind === 'rate')]);

  it('reproduces the full simulation under the recording calibration', () => {
    const cal = withPriors(DEFAULT_CALIBRATION);
    for (const sc of [...closed, ...open]) {
      const rec = recordReplay(sc, cal);
      expect(rec.trace, sc.row).toBeDefined();
      if (!rec.trace) continue;
      expect(rec.trace.exact).toBe(false);
      const replayed = replaySummary(rec.trace, resolveSimEngine({ ...sc.engine, calibration: cal }));
      const full = simulateScenario({ ...sc, engine: { ...sc.engine, calibration: cal } });
      for (const k of FIGURES) expect(replayed[k], `${sc.row} ${k}`).toBeCloseTo(full[k], 6);
    }
  });

  it('stays within a few percent of the simulation under other constants (a surrogate, re-recorded every pass)', () => {
    const other = perturbed();
    for (const sc of [...closed, ...open]) {
      const rec = recordReplay(sc, withPriors(DEFAULT_CALIBRATION));
      if (!rec.trace) throw new Error(`${sc.row}: no trace`);
      const replayed = replaySummary(rec.trace, resolveSimEngine({ ...sc.engine, calibration: other }));
      const full = simulateScenario({ ...sc, engine: { ...sc.engine, calibration: other } });
      const before = simulateScenario({ ...sc, engine: { ...sc.engine, calibration: withPriors(DEFAULT_CALIBRATION) } });
      for (const k of ['ttftMs', 'itlMs', 'outTokPerS'] as const) {
        expect(Math.abs(replayed[k] / full[k] - 1), `${sc.row} ${k}`).toBeLessThan(0.05);
      }
      // And it does move with the constants (ITL follows the slower streaming).
      expect(replayed.itlMs).toBeGreaterThan(before.itlMs * 1.03);
    }
  });

  it('the evaluator re-prices them, re-records them on refresh, and simulates them in full when asked', () => {
    const ev = new Evaluator();
    const cal = withPriors(DEFAULT_CALIBRATION);
    const other = perturbed();
    const sc = closed[0] as SeedScenario;
    ev.points([sc], cal);
    const simulated = ev.simulated;
    ev.points([sc], other);
    expect(ev.simulated).toBe(simulated);
    expect(ev.replayed).toBe(1);
    const full = ev.points([sc], other, ['fit'], true);
    expect(ev.simulated).toBe(simulated + 1);
    const direct = simulateScenario({ ...sc, engine: { ...sc.engine, calibration: other } });
    const ttft = full.find((p) => p.family.startsWith('ttft'));
    expect(ttft?.predicted).toBeCloseTo(direct.ttftMs, 6);
    expect(ev.refresh([sc], other)).toBe(1);
    const again = ev.points([sc], other);
    expect(again.map((p) => p.predicted)).toEqual(full.map((p) => p.predicted));
  });
});

describe('pooled inter-token gaps (ITL as benchmark_serving and LMDeploy print it)', () => {
  // T19: 320 ShareGPT prompts at once on vLLM V0, whose prompt-first steps stall the running decodes.
  const burst = byId([first('T19', (r) => r.tp === 1)]);

  it('a burst replay gives the full simulation\'s pooled gap median and mean under other constants (exact)', () => {
    const sc = burst[0] as SeedScenario;
    const rec = recordReplay(sc, withPriors(DEFAULT_CALIBRATION));
    expect(rec.trace?.exact).toBe(true);
    if (!rec.trace) return;
    const other = perturbed();
    const replayed = replaySummary(rec.trace, resolveSimEngine({ ...sc.engine, calibration: other }));
    const full = simulateScenario({ ...sc, engine: { ...sc.engine, calibration: other } });
    for (const k of FIGURES) expect(replayed[k], k).toBeCloseTo(full[k], 6);
  });

  it('the median gap is a decode step, below the median request\'s ITL that prefill stalls inflate; T19 fits it', () => {
    const sc = burst[0] as SeedScenario;
    const full = simulateScenario({ ...sc, engine: { ...sc.engine, calibration: withPriors(DEFAULT_CALIBRATION) } });
    expect(full.gapMedianMs).toBeLessThan(full.itlMedianMs * 0.9);
    expect(full.gapMeanMs).toBeGreaterThan(full.gapMedianMs);
    const itl = sc.metrics.find((m) => m.metric === 'ITL p50');
    expect(itl?.role).toBe('fit');
    expect(itl?.pick(full)).toBe(full.gapMedianMs);
  });
});

describe('leave one table out', () => {
  it('refits without each of two small tables and predicts it by full simulation', () => {
    const scenarios = corpusScenarios(rows.filter((r) => /^T2[23]\b/.test(r.tableGroup))).scenarios;
    const ev = new Evaluator();
    const logs: string[] = [];
    const pts = leaveOneTableOut(scenarios, withPriors(DEFAULT_CALIBRATION), ev, { iters: 2, log: (s) => logs.push(s) });
    expect(new Set(pts.map((p) => p.group))).toEqual(new Set(['T22', 'T23']));
    const fitted = scenarios.flatMap((s) => s.metrics.filter((m) => m.role === 'fit'));
    expect(pts).toHaveLength(fitted.length);
    expect(pts.every((p) => Number.isFinite(p.predicted) && p.predicted > 0)).toBe(true);
    expect(logs.map((l) => l.split(':')[0])).toEqual(['LOTO T22', 'LOTO T23']);
  });

  it('--jobs 2 shares the tables out over two child processes; on two small tables its figures are one process\'s', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ib-loto-jobs-'));
    // One process runs --loto, the other the older spelling --loto-only: both leave the tables out around the
    // shipped constants without a full refit first (a refit would move the starting point and every figure).
    const fit = (jobs: number): Promise<{ stdout: string }> => promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/sim/calibrate/fit.ts',
      '--tables', 'T20,T23', jobs === 1 ? '--loto' : '--loto-only', '--no-in-sample', '--loto-iters', '2',
      '--jobs', String(jobs), '--json', join(dir, `j${jobs}.json`)], { timeout: 120_000 });
    const [one, two] = await Promise.all([fit(1), fit(2)]);
    const points = (jobs: number): Array<{ group: string; predicted: number }> =>
      (JSON.parse(readFileSync(join(dir, `j${jobs}.json`), 'utf8')) as { lotoPoints: Array<{ group: string; predicted: number }> }).lotoPoints;
    expect(points(2)).toHaveLength(19);
    expect(points(2)).toEqual(points(1));
    expect(new Set(points(2).map((p) => p.group))).toEqual(new Set(['T20', 'T23']));
    expect(two.stdout).toContain('leave-one-table-out (2 jobs)');
    const table = (out: string): string => out.slice(out.indexOf('| table |'), out.indexOf('\n', out.indexOf('| **all** |')));
    expect(table(two.stdout)).toEqual(table(one.stdout));
    expect(one.stdout).not.toContain('refitted, in sample');
    expect(JSON.parse(readFileSync(join(dir, 'j1.json'), 'utf8'))).not.toHaveProperty('calibration');
    // Larger tables first, each to the least-loaded list.
    const sc = [...byId([first('T22', () => true)]), ...byId([first('T23', () => true)])];
    expect(shareGroups(sc, ['T22', 'T23'], 4)).toHaveLength(2);
  });

  it('refuses an unknown flag or a flag without its value in one line, exit 2', async () => {
    const run = (args: string[]): Promise<{ code: number; stderr: string }> => new Promise((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'src/sim/calibrate/fit.ts', ...args], { timeout: 60_000 },
        (err, _out, stderr) => resolve({ code: (err as { code?: number } | null)?.code ?? 0, stderr }));
    });
    const typo = await run(['--lotto']);
    expect(typo.code).toBe(2);
    expect(typo.stderr.trim().split('\n')).toHaveLength(1);
    expect(typo.stderr).toContain('unknown argument --lotto');
    const bare = await run(['--loto', '--jobs']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('--jobs needs a value');
  });

  it('--only refits just the named constants and keeps the start\'s fitted list; an unknown key is one line, exit 2', async () => {
    const run = (args: string[]): Promise<{ code: number; stderr: string }> => new Promise((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'src/sim/calibrate/fit.ts', ...args], { timeout: 300_000 },
        (err, _out, stderr) => resolve({ code: (err as { code?: number } | null)?.code ?? 0, stderr }));
    });
    const bad = await run(['--no-corpus', '--tables', 'seed 003', '--only', 'L20-48GB.etaX']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toContain('--only: no fitted constant L20-48GB.etaX');
    const json = join(mkdtempSync(join(tmpdir(), 'ib-fit-only-')), 'fit.json');
    const ok = await run(['--no-corpus', '--tables', 'seed 003', '--only', 'L20-48GB.etaC', '--passes', '1', '--iters', '2', '--no-in-sample', '--json', json]);
    expect(ok.code).toBe(0);
    const cal = (JSON.parse(readFileSync(json, 'utf8')) as { calibration: typeof DEFAULT_CALIBRATION }).calibration;
    expect(cal.fitted).toEqual(DEFAULT_CALIBRATION.fitted);
    expect(cal.note).toContain('L20-48GB.etaC refitted with the others held');
    const { etaC: _moved, ...rest } = cal.hardware['L20-48GB']!;
    const { etaC: _was, ...restWas } = DEFAULT_CALIBRATION.hardware['L20-48GB']!;
    expect(rest).toEqual(restWas);
    for (const k of Object.keys(DEFAULT_CALIBRATION.engines)) expect(cal.engines[k]).toEqual(DEFAULT_CALIBRATION.engines[k]);
    for (const k of Object.keys(DEFAULT_CALIBRATION.hardware).filter((g) => g !== 'L20-48GB')) expect(cal.hardware[k]).toEqual(DEFAULT_CALIBRATION.hardware[k]);
  }, 320_000);

  it('names fitted entries by their calibration key, dots in engine names included', () => {
    const sc = byId(rows.filter((r) => r.tableGroup.startsWith('T23')).map((r) => r.id));
    const keys = fittedKeys(buildParams(sc));
    expect(keys).toContain('RTX-4090');
    expect(fittedKeys([{ key: 'vllm-0.2.c0Ms' }, { key: 'etaMoe' }] as never)).toEqual(['vllm-0.2', 'etaMoe']);
  });
});

describe('model terms the corpus fit added', () => {
  const mixtral = { engine: 'trtllm', model: 'Mixtral-8x7B', gpu: 'H100', gpus: 2 } as const;
  const decode = { decodeSeqs: 64, decodeCtxSum: 64 * 1024, prefillCount: 0, prefillPrior: [], prefillTokens: [], emittingSeqs: 64 };

  it('in-process benchmark rows have no API time; served rows keep it, and only they inform tApiMs', () => {
    const cal = withPriors(DEFAULT_CALIBRATION);
    const served = resolveSimEngine({ ...mixtral, calibration: cal }).config;
    const local = resolveSimEngine({ ...mixtral, calibration: cal, inProcess: true }).config;
    expect(served.ingestMs + served.egressMs).toBeGreaterThan(0);
    expect(local.ingestMs + local.egressMs).toBe(0);
    // T06 (LMDeploy's profile_generation) runs in process; T02 (Triton) is served; T22's one serving row too.
    const t06 = byId([first('T06', () => true)])[0] as SeedScenario;
    const t02 = byId([first('T02', () => true)])[0] as SeedScenario;
    const t22rate = byId([first('T22', (r) => r.load.kind === 'rate')])[0] as SeedScenario;
    expect(t06.engine.inProcess).toBe(true);
    expect(t02.engine.inProcess).toBeUndefined();
    expect(t22rate.engine.inProcess).toBeUndefined();
    const t06all = corpusScenarios(rows.filter((r) => r.tableGroup.startsWith('T06'))).scenarios;
    const keys = buildParams(t06all).map((p) => p.key);
    expect(keys).toContain('lmdeploy.c0Ms');
    expect(keys).not.toContain('lmdeploy.tApiMs');
  });

  it('an engine MoE efficiency applies to that engine only, and absent it the shared etaMoe holds as before', () => {
    const base = withPriors(DEFAULT_CALIBRATION);
    const step = (cal: Calibration, engine: string): number => resolveSimEngine({ ...mixtral, engine, calibration: cal }).config.cost.stepMs(decode);
    const own = structuredClone(base);
    (own.engines['trtllm'] as NonNullable<Calibration['engines'][string]>).etaMoe = base.etaMoe / 2;
    (own.engines['trtllm'] as NonNullable<Calibration['engines'][string]>).moeBw = 0.5;
    expect(step(own, 'trtllm')).toBeGreaterThan(step(base, 'trtllm') * 1.05);
    expect(step(own, 'vllm-v0')).toBe(step(base, 'vllm-v0'));
    // A dense model does not see MoE constants.
    const dense = (cal: Calibration): number => resolveSimEngine({ engine: 'trtllm', model: 'Llama-3.1-8B', gpu: 'H100', gpus: 1, calibration: cal }).config.cost.stepMs(decode);
    expect(dense(own)).toBe(dense(base));
  });

  it('fits MoE constants per engine where 3 MoE rows inform them, else the shared etaMoe', () => {
    const t01moe = corpusScenarios(rows.filter((r) => r.tableGroup.startsWith('T01') && /Mixtral/.test(r.model)).slice(0, 4)).scenarios;
    const keys = buildParams(t01moe).map((p) => p.key);
    expect(keys).toEqual(expect.arrayContaining(['trtllm.etaMoe', 'trtllm.moeBw']));
    expect(keys).not.toContain('etaMoe');
    const two = buildParams(t01moe.slice(0, 2)).map((p) => p.key);
    expect(two).not.toContain('trtllm.etaMoe');
  });

  it('a calibration file keeps per-engine MoE constants', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ib-cal-')), 'cal.json');
    writeFileSync(file, JSON.stringify({ engines: { trtllm: { c0Ms: 1, cSeqUs: 5, tApiMs: 4, etaMoe: 0.7, moeBw: 0.9 } } }));
    expect(loadCalibrationFile(file).engines['trtllm']).toEqual({ c0Ms: 1, cSeqUs: 5, tApiMs: 4, etaMoe: 0.7, moeBw: 0.9 });
  });
});

describe('the fit holds constants that few figures inform near their priors', () => {
  it('--prior-weight: a strong prior keeps an engine constant that four rows inform where a weak one lets it move', () => {
    // T23: five vLLM V1 rows on an RTX 4090 (the only V1 table); its TTFT wants a different API time than the prior.
    const scenarios = corpusScenarios(rows.filter((r) => /^T23\b/.test(r.tableGroup))).scenarios;
    const start = withPriors(DEFAULT_CALIBRATION);
    const prior = withPriors(PRIORS).engines['vllm-v1']?.tApiMs as number;
    const fit = (priorWeight: number) => fitCalibration(scenarios, start, { passes: 1, iters: 5, only: ['vllm-v1.tApiMs'], priorWeight }).engines['vllm-v1']?.tApiMs as number;
    const free = fit(0);
    const held = fit(100);
    expect(Math.abs(Math.log(free / prior))).toBeGreaterThan(0.2);
    expect(Math.abs(Math.log(held / prior))).toBeLessThan(Math.abs(Math.log(free / prior)) / 4);
  });

  it('overlapP joins compute and memory time: 1 adds them, 2 (the default) is the root of the sum of squares', () => {
    const engine = { engine: 'vllm', model: 'Llama-3.1-8B', gpu: 'H100', gpus: 1 };
    const { overlapP: _shipped, ...without } = withPriors(DEFAULT_CALIBRATION);
    const step = (overlapP?: number) => resolveSimEngine({ ...engine, calibration: { ...without, ...(overlapP ? { overlapP } : {}) } })
      .config.cost.stepMs({ decodeSeqs: 0, decodeCtxSum: 0, prefillCount: 1, prefillPrior: [0], prefillTokens: [128], emittingSeqs: 1 });
    expect(step(2)).toBeCloseTo(step(), 9);
    expect(step(1)).toBeGreaterThan(step(2) * 1.2);
    expect(step(3)).toBeLessThan(step(2));
  });
});

describe('reading the public rows', () => {
  const scenario = (id: number): SeedScenario => byId([id])[0] as SeedScenario;
  // Low load is judged over the whole table: build its scenarios together.
  const families = (table: string): Map<string, string | undefined> => new Map(corpusScenarios(rows.filter((r) => r.tableGroup.startsWith(table))).scenarios
    .map((s) => [s.row.split(' ')[0] as string, s.metrics.find((m) => m.metric.startsWith('TTFT'))?.family]));

  it('fixed-length rows whose outputs averaged well short of the request stopped at EOS: lengths vary, the mean is the row\'s', () => {
    const r = rows.find((x) => x.id === first('T23', (y) => y.load.value === 4)) as CorpusRow;
    const meanOut = (r.metrics.outputTokPerS as number) / (r.metrics.reqPerS as number);
    expect(meanOut / (r.outputTokens as number)).toBeLessThan(0.85);
    const sc = scenario(r.id);
    const items = Array.from({ length: 2000 }, (_, i) => sc.stage.workload.item(i));
    const outs = items.map((it) => it.outputTokens as number);
    expect(Math.max(...outs)).toBe(r.outputTokens);
    expect(Math.min(...outs)).toBeLessThan(r.outputTokens as number / 2);
    expect(outs.reduce((a, b) => a + b, 0) / outs.length).toBeCloseTo(meanOut, -0.5);
    expect(items.every((it) => (it.outputTokens as number) >= 1 && it.promptTokens === r.inputTokens)).toBe(true);
    expect(sc.metrics.every((m) => m.note?.includes('outputs stopped at EOS: 100 of 128 tokens'))).toBe(true);
    // T02's 467/16 row printed 14 output tokens a request (87.5%), within its table's ±13% scatter: fixed lengths.
    const t02 = scenario(first('T02', (y) => y.outputTokens === 16 && y.load.value === 2)).stage.workload;
    const fixedOuts = new Set(Array.from({ length: 50 }, (_, i) => t02.item(i).outputTokens));
    expect([...fixedOuts]).toEqual([16]);
  });

  it('low-load TTFT is the lowest rate of a deployment\'s sweep; variants measured only at 5 req/s count as loaded', () => {
    const t13 = families('T13');
    for (const r of rows.filter((x) => x.tableGroup.startsWith('T13'))) {
      expect(t13.get(`#${r.id}`), `#${r.id} at ${r.load.value} req/s`).toBe(r.load.value === 1 ? 'ttft-low' : 'ttft');
    }
    const t02 = families('T02');
    for (const r of rows.filter((x) => x.tableGroup.startsWith('T02') && x.load.kind === 'rate')) {
      expect(t02.get(`#${r.id}`), `#${r.id}`).toBe(r.load.value === 2 ? 'ttft-low' : 'ttft');
    }
  });
});
