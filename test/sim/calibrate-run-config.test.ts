import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CALIBRATION } from '../../src/sim/calibrate/constants.js';
import { loadCalibrationFile, saveCalibrationFile } from '../../src/sim/calibrate/file.js';
import { simEngineForRun } from '../../src/sim/calibrate/run-config.js';
import { loadMeasuredRun } from '../../src/sim/calibrate/run-rows.js';
import { scoreRun } from '../../src/sim/calibrate/run-score.js';
import { writeVirtualRun } from './calibrate-run-helpers.js';

let root: string;
let runDir: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ib-calconfig-'));
  runDir = await writeVirtualRun(join(root, 'run'), { engine: 'sglang', model: 'Qwen2-7B-Instruct', gpu: 'H100', gpus: 1 }, { profile: 'concurrent', concurrency: '1,4', maxSeconds: '1' });
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The run folder with its summary and manifest edited, as a real server's run would record them. */
function edited(name: string, edit: (summary: Record<string, any>, manifest: Record<string, any>) => void): string {
  const dir = join(root, name);
  rmSync(dir, { recursive: true, force: true });
  const summary = JSON.parse(readFileSync(join(runDir, 'summary.json'), 'utf8')) as Record<string, any>;
  const manifest = JSON.parse(readFileSync(join(runDir, 'manifest.json'), 'utf8')) as Record<string, any>;
  edit(summary, manifest);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'summary.json'), JSON.stringify(summary));
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  return dir;
}

describe('the configuration a run measured', () => {
  it('comes from the run folder; typed flags win', () => {
    const run = loadMeasuredRun(runDir);
    expect(simEngineForRun(run, {}, 7)).toEqual({ engine: 'sglang', model: 'Qwen2-7B-Instruct', gpu: 'H100', gpus: 1, seed: 7 });
    expect(simEngineForRun(run, { gpu: 'A100-80GB', engine: 'vllm' })).toMatchObject({ engine: 'vllm', gpu: 'A100-80GB', model: 'Qwen2-7B-Instruct' });
  });

  it('a real server\'s run: the detected engine and served model name; the GPU only when run --gpu recorded it', () => {
    const dir = edited('real', (s, m) => {
      s['context'] = { model: 'Qwen/Qwen2-7B-Instruct', engine: 'sglang' };
      s['target'] = { api: 'openai-completions', engine: 'sglang', model: 'Qwen/Qwen2-7B-Instruct', simulated: false };
      delete m['engine'];
      m['command'] = 'run';
    });
    const run = loadMeasuredRun(dir);
    expect(() => simEngineForRun(run, {})).toThrow(expect.objectContaining({ message: expect.stringMatching(/which GPU/), hint: expect.stringMatching(/^pass --gpu/) }));
    expect(simEngineForRun(run, { gpu: 'H100' })).toMatchObject({ engine: 'sglang', model: 'Qwen/Qwen2-7B-Instruct', gpu: 'H100', gpus: 1 });
  });

  it('names the flag to pass when neither the flags nor the run say', () => {
    const noEngine = loadMeasuredRun(edited('openai', (s, m) => {
      s['target'] = { api: 'openai-chat', engine: 'openai', model: 'x', simulated: false };
      delete m['engine'];
    }));
    expect(() => simEngineForRun(noEngine, {})).toThrow(expect.objectContaining({ code: 'E_CONFIG', message: expect.stringMatching(/which engine/), hint: expect.stringMatching(/--engine/) }));
    const unknownModel = loadMeasuredRun(edited('custom-model', (s, m) => {
      s['context'] = { ...s['context'], model: 'my-finetune' };
      delete m['engine'];
    }));
    expect(() => simEngineForRun(unknownModel, {})).toThrow(expect.objectContaining({ hint: expect.stringMatching(/--model/) }));
    expect(simEngineForRun(unknownModel, { model: 'Qwen2-7B-Instruct' }).model).toBe('Qwen2-7B-Instruct');
  });
});

describe('calibration files', () => {
  it('round-trip: what is saved loads back equal, and predicts the same', () => {
    const cal = structuredClone(DEFAULT_CALIBRATION);
    (cal.hardware['H100'] as { etaM: number }).etaM = 0.5;
    cal.overlapP = 1.7;
    cal.note = 'test fit';
    const file = join(root, 'cal.json');
    saveCalibrationFile(file, cal);
    const back = loadCalibrationFile(file);
    expect(back).toEqual(cal);
    const run = loadMeasuredRun(runDir);
    const engine = { engine: 'sglang', model: 'Qwen2-7B-Instruct', gpu: 'H100', gpus: 1 };
    expect(scoreRun(run, { ...engine, calibration: back })).toEqual(scoreRun(run, { ...engine, calibration: cal }));
    // And it changes the prediction: the run was measured with the default constants.
    expect(scoreRun(run, { ...engine, calibration: back }).overallPct).toBeGreaterThan(scoreRun(run, engine).overallPct + 5);
  });

  it('a hand-written file may give some entries; the rest are the seed fit', () => {
    const file = join(root, 'partial.json');
    writeFileSync(file, JSON.stringify({ engines: { sglang: { c0Ms: 2, cSeqUs: 30, tApiMs: 3 } } }));
    const c = loadCalibrationFile(file);
    expect(c.engines['sglang']).toEqual({ c0Ms: 2, cSeqUs: 30, tApiMs: 3 });
    expect(c.hardware).toEqual(DEFAULT_CALIBRATION.hardware);
    expect(c.etaMoe).toBe(DEFAULT_CALIBRATION.etaMoe);
  });

  it('missing, unreadable JSON or the wrong shape: one line each', () => {
    expect(() => loadCalibrationFile(join(root, 'none.json'))).toThrow(/cannot read it \(ENOENT\)/);
    const bad = join(root, 'bad.json');
    writeFileSync(bad, '{"hardware": ');
    expect(() => loadCalibrationFile(bad)).toThrow(/is not valid JSON/);
    writeFileSync(bad, JSON.stringify({ hardware: { H100: { etaM: 0.5 } } }));
    expect(() => loadCalibrationFile(bad)).toThrow(/not a calibration file .*hardware\.H100/);
    writeFileSync(bad, JSON.stringify({ engines: { sglang: { c0Ms: 1, cSeqUs: 1, tApiMs: 1, extra: 1 } } }));
    expect(() => loadCalibrationFile(bad)).toThrow(expect.objectContaining({ code: 'E_CONFIG' }));
  });
});
