import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CapacityResult } from '../../src/load/capacity-types.js';
import { startSimServer, type SimServer } from '../../src/sim/server/index.js';
import { runCli } from '../helpers/cli.js';

// `predict --profile capacity` (virtual time) and `run --profile capacity` against `inferbench sim` of the same
// configuration run the same search on the same engine model: their answers agree within 10%.
const config = ['--prompt-tokens', '128', '--output-tokens', '32', '--max-seconds', '1', '--profile', 'capacity', '--slo', 'ttft:200', '--json'];
let sim: SimServer;

beforeAll(async () => {
  sim = await startSimServer({ engine: 'vllm', model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1, seed: 1 });
});
afterAll(async () => sim.close());

describe('capacity: prediction and measurement of the same simulated engine', () => {
  it('agree within 10%', async () => {
    const predicted = await runCli(['predict', '--engine', 'vllm', '--model', 'Qwen2-7B-Instruct', '--gpu', 'A100-80GB', ...config]);
    expect(predicted.code, predicted.stderr).toBe(0);
    // Into a temp folder: a test never writes into the user's ./inferbench-results.
    const out = join(mkdtempSync(join(tmpdir(), 'cap-sim-')), 'run');
    const measured = await runCli(['run', '--target', sim.url, '--tokenizer', 'approx', '--no-progress', '--out', out, ...config], { timeoutMs: 240_000 });
    expect(measured.code, measured.stderr).toBe(0);
    const p = (JSON.parse(predicted.stdout) as { capacity: CapacityResult }).capacity;
    const m = (JSON.parse(measured.stdout) as { capacity: CapacityResult }).capacity;
    expect(p.feasibleMax).toBeGreaterThan(10);
    expect(Math.abs((m.feasibleMax as number) - (p.feasibleMax as number)) / (p.feasibleMax as number)).toBeLessThanOrEqual(0.1);
  }, 240_000);
});
