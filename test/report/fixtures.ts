import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runCli } from '../helpers/cli.js';

/** Saved runs made by `predict --out` (virtual time, under a second each) in a fresh results directory. */
export interface Fixtures {
  root: string;
  results: string;
  gridVllm: string;
  gridTgi: string;
  sweeps: string[];
}

const GRID = ['--profile', 'grid', '--input-lens', '128,512', '--output-lens', '128,512', '--num-prompts', '30'];
const SWEEP = ['--profile', 'sweep', '--model', 'Qwen2-72B-Instruct', '--gpu', 'L20-48GB', '--max-requests', '60', '--sweep-rates', '3'];

async function predict(args: string[], out: string): Promise<string> {
  const r = await runCli(['predict', ...args, '--out', out]);
  expect(r.code, r.stderr).toBe(0);
  return out;
}

export async function makeFixtures(opts: { sweeps?: boolean } = {}): Promise<Fixtures> {
  const root = mkdtempSync(join(tmpdir(), 'ib-report-'));
  const results = join(root, 'inferbench-results');
  const [gridVllm, gridTgi] = await Promise.all([
    predict([...GRID, '--engine', 'vllm'], join(results, '20261101-100000-grid-vllm')),
    predict([...GRID, '--engine', 'tgi', '--label', 'tgi-baseline'], join(results, '20261102-100000-grid-tgi')),
  ]);
  const sweeps = opts.sweeps
    ? await Promise.all([
        predict([...SWEEP, '--engine', 'vllm', '--gpus', '8'], join(results, '20261103-100000-sweep-vllm')),
        predict([...SWEEP, '--engine', 'sglang', '--gpus', '8'], join(results, '20261104-100000-sweep-sglang')),
        predict([...SWEEP, '--engine', 'lmdeploy', '--gpus', '4', '--quant', 'awq'], join(results, '20261105-100000-sweep-lmdeploy')),
      ])
    : [];
  return { root, results, gridVllm, gridTgi, sweeps };
}
