import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CALIBRATION } from '../../src/sim/calibrate/constants.js';
import { calibrateFromRun, type RunCalibration } from '../../src/sim/calibrate/run-fit.js';
import { loadMeasuredRun } from '../../src/sim/calibrate/run-rows.js';
import { scoreRun } from '../../src/sim/calibrate/run-score.js';
import { writeVirtualRun } from './calibrate-run-helpers.js';

const ENGINE = { engine: 'vllm', model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1 };
/** The "deployment": 30% slower than the catalog says, as `inferbench sim --time-scale 1.3` is. */
const SLOW = { ...ENGINE, modelTimeScale: 1.3 };

let root: string;
let sweepDir: string;
let concurrentDir: string;
let fitted: RunCalibration | undefined;
/** The sweep fit, made once for the tests that read it. */
const sweepFit = (): RunCalibration => (fitted ??= calibrateFromRun(sweepDir, ENGINE, { now: new Date('2026-01-02T00:00:00Z') }));

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ib-calibrate-'));
  sweepDir = await writeVirtualRun(join(root, 'sweep'), SLOW, { maxSeconds: '3', sweepRates: '3' });
  // Another profile on other lengths, closed loop: what the calibration is checked on.
  concurrentDir = await writeVirtualRun(join(root, 'concurrent'), SLOW, {
    profile: 'concurrent', concurrency: '1,4,16', promptTokens: '1024', outputTokens: '64', maxSeconds: '3',
  });
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('calibrateFromRun (virtual time)', () => {
  it('fits a deployment 30% slower than the catalog: the error on another profile drops below 5%', () => {
    const fit = sweepFit();
    // Every on-curve row: the sweep's top rate sits at the throughput row's measured rate (256 in flight since the
    // cap search rates its steps from settled requests), which this deployment does not sustain: it is left out.
    expect(fit.rows).toBe(loadMeasuredRun(sweepDir).rows.length);
    expect(fit.rows).toBeGreaterThanOrEqual(4);
    // On the run it was fitted to.
    expect(fit.before.overallPct).toBeGreaterThan(15);
    expect(fit.after.overallPct).toBeLessThan(5);
    expect(fit.after.loss).toBeLessThan(fit.before.loss / 10);
    for (const m of ['ttft', 'itl', 'e2e', 'requestThroughput', 'outputTokenThroughput'] as const) {
      expect(fit.after.perMetric[m]?.medianPct).toBeLessThan(5);
    }
    // On a different profile and other lengths, never seen by the fit.
    const other = loadMeasuredRun(concurrentDir);
    const before = scoreRun(other, ENGINE);
    const after = scoreRun(other, fit.engine);
    expect(before.overallPct).toBeGreaterThan(15);
    expect(after.overallPct).toBeLessThan(5);
    expect(before.perMetric.requestThroughput?.medianPct).toBeGreaterThan(20);
    expect(after.perMetric.requestThroughput?.medianPct).toBeLessThan(5);
  });

  it('moves the constants of that configuration only, the slow way, and says where they came from', () => {
    const fit = sweepFit();
    const c = fit.calibration;
    expect(c.hardware['A100-80GB']?.etaM).toBeLessThan(DEFAULT_CALIBRATION.hardware['A100-80GB']?.etaM as number);
    expect(c.hardware['A100-80GB']?.etaC).toBeLessThan(DEFAULT_CALIBRATION.hardware['A100-80GB']?.etaC as number);
    expect(c.hardware['H100']).toEqual(DEFAULT_CALIBRATION.hardware['H100']);
    expect(c.engines['sglang']).toEqual(DEFAULT_CALIBRATION.engines['sglang']);
    expect(fit.constants.map((k) => k.key)).toEqual(['A100-80GB.etaM', 'A100-80GB.etaC', 'vllm-v1.c0Ms', 'vllm-v1.cSeqUs', 'vllm-v1.tApiMs']);
    expect(c.note).toContain(sweepDir);
    expect(c.note).toContain('2026-01-02');
    expect(c.fitted).toEqual(expect.arrayContaining(['A100-80GB', 'vllm-v1']));
    // The input calibration is left as it was.
    expect(DEFAULT_CALIBRATION.note).not.toContain(sweepDir);
  });

  it('fits the link constants too when the run spans GPUs', async () => {
    const tp = { engine: 'sglang', model: 'Llama-3.1-70B-Instruct', gpu: 'H100', gpus: 4 };
    const dir = await writeVirtualRun(join(root, 'tp4'), { ...tp, modelTimeScale: 1.3 }, { profile: 'concurrent', concurrency: '1,8', maxSeconds: '2' });
    const fit = calibrateFromRun(dir, tp, { passes: 1 });
    expect(fit.constants.map((k) => k.key)).toEqual(expect.arrayContaining(['H100.linkAlphaUs', 'H100.linkBetaGBs']));
    expect(fit.after.overallPct).toBeLessThan(fit.before.overallPct / 3);
  });

  it('re-predicts each row at its own load: closed streams, open target rate, the throughput row\'s searched cap, grid cells', async () => {
    const sweep = loadMeasuredRun(sweepDir);
    const [sync, burst, ...open] = sweep.rows;
    expect(sync?.spec).toMatchObject({ kind: 'closed', concurrency: 1, limits: { maxSeconds: 3 } });
    // The throughput row searched its in-flight cap; so does its re-prediction (the ramp shapes its window).
    expect(burst?.measured.window?.capSearch).toBeDefined();
    expect(burst?.spec).toMatchObject({ kind: 'burst', maxConcurrency: 256, window: { adaptiveCap: { start: 16 } } });
    for (const r of open) expect(r.spec).toMatchObject({ kind: 'open', rate: r.measured.targetRate, arrival: 'constant' });
    const grid = await writeVirtualRun(join(root, 'grid'), SLOW, { profile: 'grid', inputLens: '128,1024', outputLens: '64', numPrompts: '20' });
    const cells = loadMeasuredRun(grid).rows;
    expect(cells.map((r) => [r.spec.kind, r.spec.grid?.input, r.spec.grid?.role])).toEqual([
      ['burst', 128, 'throughput'], ['closed', 128, 'latency'], ['burst', 1024, 'throughput'], ['closed', 1024, 'latency'],
    ]);
    expect(cells[2]?.spec.workload.item(0)).toMatchObject({ promptTokens: 1024, outputTokens: 64 });
    expect(calibrateFromRun(grid, ENGINE, { passes: 1 }).after.overallPct).toBeLessThan(5);
  });

  it('leaves overloaded rows out of the fit and says so', () => {
    const dir = join(root, 'overloaded');
    const src = JSON.parse(readFileSync(join(sweepDir, 'summary.json'), 'utf8')) as { stages: Array<Record<string, unknown>> };
    (src.stages[4] as Record<string, unknown>)['belowTarget'] = true;
    writeFolder(dir, src, readFileSync(join(sweepDir, 'manifest.json'), 'utf8'));
    const run = loadMeasuredRun(dir);
    expect(run.rows.map((r) => r.measured.index)).toEqual([0, 1, 2, 3]);
    expect(run.notes.join('\n')).toMatch(/1 overloaded row left out/);
  });

  it('rebuilds rows from their measured mean lengths when the run used a dataset', () => {
    const dir = join(root, 'dataset');
    const manifest = JSON.parse(readFileSync(join(concurrentDir, 'manifest.json'), 'utf8')) as { options: { workload: Record<string, unknown> } };
    manifest.options.workload['data'] = 'prompts.jsonl';
    writeFolder(dir, JSON.parse(readFileSync(join(concurrentDir, 'summary.json'), 'utf8')), JSON.stringify(manifest));
    const run = loadMeasuredRun(dir);
    expect(run.rows[0]?.spec.workload.item(3)).toMatchObject({ promptTokens: 1024, outputTokens: 64 });
    expect(run.notes.join('\n')).toMatch(/measured mean prompt and output lengths/);
  });

  it('bad run folders are one-line config errors', () => {
    expect(() => loadMeasuredRun(join(root, 'nope'))).toThrow(/does not exist/);
    expect(() => loadMeasuredRun(root)).toThrow(/has no summary\.json/);
    const none = join(root, 'no-success');
    const s = JSON.parse(readFileSync(join(sweepDir, 'summary.json'), 'utf8')) as { stages: Array<{ requests: { ok: number } }> };
    for (const st of s.stages) st.requests.ok = 0;
    writeFolder(none, s);
    expect(() => calibrateFromRun(none, ENGINE)).toThrow(/no row has a successful request/);
    const bad = join(root, 'bad-json');
    writeFolder(bad, undefined);
    writeFileSync(join(bad, 'summary.json'), '{"stages": [');
    expect(() => loadMeasuredRun(bad)).toThrow(expect.objectContaining({ code: 'E_CONFIG' }));
  });
});

function writeFolder(dir: string, summary: unknown, manifest?: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  if (summary !== undefined) writeFileSync(join(dir, 'summary.json'), JSON.stringify(summary));
  if (manifest !== undefined) writeFileSync(join(dir, 'manifest.json'), manifest);
}
