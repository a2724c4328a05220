import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveRunOptions } from '../../src/config/run-options.js';
import { buildProfileConfig } from '../../src/runplan/profile-config.js';
import { setupPredictWorkload } from '../../src/runplan/workload-setup.js';
import { runBenchmark } from '../../src/load/benchmark.js';
import type { SimEngineOptions } from '../../src/sim/create.js';
import { createVirtualStageRunner } from '../../src/sim/virtual-runner.js';

/**
 * A "measured" run folder made in virtual time: the profile `flags` ask for, predicted against `engine` (e.g. with
 * `modelTimeScale: 1.3`, a deployment 30% slower than the catalog) and written as `predict --out` writes it.
 */
export async function writeVirtualRun(dir: string, engine: SimEngineOptions, flags: Record<string, unknown>): Promise<string> {
  const opts = resolveRunOptions({ profile: 'sweep', promptTokens: '512', outputTokens: '128', numPrompts: '100', seed: '42', ...flags } as never, {});
  const { workload, workloadFor } = await setupPredictWorkload(opts);
  const runner = createVirtualStageRunner(engine, { seed: opts.seed });
  const result = await runBenchmark(buildProfileConfig(opts, workloadFor, workload), runner);
  const d = runner.description;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ createdAt: new Date().toISOString(), command: 'predict', options: opts, engine: d }));
  writeFileSync(join(dir, 'summary.json'), JSON.stringify({
    schemaVersion: 1, runId: 'virtual-measured', layout: opts.profile === 'grid' ? 'grid' : 'sweep',
    context: { model: d.model, engine: d.engineLabel, gpu: d.gpu, gpus: d.gpus, quant: d.quant },
    target: { api: 'virtual', engine: d.engine, model: d.model, simulated: true },
    profile: opts.profile, stages: result.stages, notes: [],
  }));
  return dir;
}
