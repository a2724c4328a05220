/**
 * Issue 51, item 10 (newcomer #12): a run against `inferbench sim` did not record the GPU the simulator knows, so
 * `predict --calibrate-from RUN` refused ("does not say which GPU it ran on") and the table header had no GPU. The
 * simulator now names its hardware in x-sim-* headers on every reply (as a real engine reports its version);
 * detection reads them, and the run records them where --gpu/--gpus/--quant would go.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectEngine } from '../../src/dialects/detect.js';
import { loadMeasuredRun } from '../../src/sim/calibrate/run-rows.js';
import { simEngineForRun } from '../../src/sim/calibrate/run-config.js';
import { startSimServer, type SimServer } from '../../src/sim/server/index.js';
import { runCli } from '../helpers/cli.js';
import { readRunFolder } from '../helpers/run-folder.js';

let sim: SimServer;
let tmp: string;
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'inferbench-sim-hw-'));
  // Seed 004's deployment: vLLM 0.2 serving an AWQ model on an A100-40GB.
  sim = await startSimServer({ engine: 'vllm-legacy', model: 'Mistral-7B-OpenOrca-AWQ', gpu: 'A100-40GB', gpus: 1, quant: 'awq', seed: 2, modelTimeScale: 0.05 });
});
afterAll(async () => {
  await sim.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('a run against `inferbench sim` records its hardware', () => {
  it('detection reads the GPU, count and quantization from the reply headers', async () => {
    const found = await detectEngine(sim.url);
    expect(found.engine).toBe('vllm-legacy');
    expect(found.simHardware).toEqual({ gpu: 'A100-40GB', gpus: 1, quant: 'awq' });
  });

  it('in the table header and summary.json, so --calibrate-from needs no --gpu', async () => {
    const out = join(tmp, 'run');
    const res = await runCli([
      'run', '--target', sim.url, '--model', 'Mistral-7B-OpenOrca-AWQ', '--profile', 'concurrent', '--concurrency', '2', '--max-requests', '4', '--output-tokens', '8',
      '--tokenizer', 'approx', '--idle-wait', '0', '--no-progress', '--out', out,
    ]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^Mistral-7B-OpenOrca-AWQ \(awq\) · 1× A100-40GB · vllm-legacy/m);
    const { doc } = readRunFolder(out);
    expect(doc.context).toMatchObject({ gpu: 'A100-40GB', gpus: 1, quant: 'awq' });
    expect(simEngineForRun(loadMeasuredRun(out), {})).toMatchObject({ engine: 'vllm-legacy', model: 'Mistral-7B-OpenOrca-AWQ', gpu: 'A100-40GB', gpus: 1, quant: 'awq' });
    // The user's flag still wins.
    expect(simEngineForRun(loadMeasuredRun(out), { gpu: 'H100' })).toMatchObject({ gpu: 'H100' });
  }, 60_000);
});
