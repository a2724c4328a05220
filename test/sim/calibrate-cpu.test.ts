/**
 * `predict --calibrate-from RUN` for a llama.cpp server on a CPU: the run folder says what a real llama-server run
 * says (engine llamacpp, the GGUF file it serves, no hardware), and `--gpu cpu:<cores>c:<GB/s>` describes the machine.
 * The "measured" run is made in virtual time by a deployment 1.5× slower than the description (deterministic).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { writeVirtualRun } from './calibrate-run-helpers.js';

const root = mkdtempSync(join(tmpdir(), 'inferbench-cal-cpu-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const CPU = 'cpu:16c:80';
const MODEL = 'models/Llama-3.2-1B-Instruct-Q4_K_M.gguf';

/** Rewrites a virtual run folder as `run --target <llama-server>` writes one: no engine description, no GPU. */
function asRealServerRun(dir: string): void {
  const summaryPath = join(dir, 'summary.json');
  const s = JSON.parse(readFileSync(summaryPath, 'utf8')) as Record<string, unknown> & { context: Record<string, unknown> };
  s['context'] = { model: MODEL, engine: 'llamacpp b1-de3ff81' };
  s['target'] = { api: 'openai-completions', engine: 'llamacpp', model: MODEL, simulated: false };
  writeFileSync(summaryPath, JSON.stringify(s));
  const manifestPath = join(dir, 'manifest.json');
  const m = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>;
  delete m['engine'];
  writeFileSync(manifestPath, JSON.stringify(m));
}

describe('calibration from a measured llama.cpp run on a CPU', () => {
  it('fits the CPU described by --gpu cpu:… and the served GGUF name, without a config file', async () => {
    const run = join(root, 'measured');
    await writeVirtualRun(run, { engine: 'llamacpp', model: 'Llama-3.2-1B', quant: 'Q4_K_M', gpu: CPU, gpus: 1, modelTimeScale: 1.5, seed: 3 }, {
      profile: 'concurrent', concurrency: '1,4', maxRequests: '24', promptTokens: '256', outputTokens: '32',
    });
    asRealServerRun(run);

    // Which hardware is not in the run: one line that names the CPU forms too.
    const noGpu = await runCli(['predict', '--calibrate-from', run]);
    expect(noGpu.code).toBe(2);
    expect(noGpu.stderr.trim().split('\n')).toHaveLength(1);
    expect(noGpu.stderr).toMatch(/does not say which GPU .*pass --gpu .*a CPU: --gpu .*cpu:<cores>c:<GB\/s>/);

    const saved = join(root, 'cal.json');
    const p = await runCli(['predict', '--calibrate-from', run, '--gpu', CPU, '--save-calibration', saved,
      '--profile', 'concurrent', '--concurrency', '2', '--max-requests', '12', '--prompt-tokens', '256', '--output-tokens', '32', '--json']);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stderr).toMatch(/calibration: fitted llamacpp models\/Llama-3\.2-1B-Instruct-Q4_K_M\.gguf on cpu:16c:80 to 2 rows/);
    expect(p.stderr).toMatch(/constants: cpu:16c:80gbs:1536gflops:64gib\.etaM /);
    const doc = JSON.parse(p.stdout) as {
      context: { gpu: string; quant: string };
      calibration: { before: { overallPct: number }; after: { overallPct: number } };
    };
    expect(doc.context).toMatchObject({ gpu: 'cpu:16c:80gbs:1536gflops:64gib', quant: 'Q4_K_M' });
    // 1.5× slower than described: a large error before; the fit takes most of it away.
    expect(doc.calibration.before.overallPct).toBeGreaterThan(20);
    expect(doc.calibration.after.overallPct).toBeLessThan(doc.calibration.before.overallPct / 3);

    // The saved constants apply to the same description (the canonical name is their key).
    const again = await runCli(['predict', '--calibration', saved, '--engine', 'llamacpp', '--gpu', CPU, '--model', MODEL,
      '--profile', 'synchronous', '--max-requests', '3', '--prompt-tokens', '256', '--output-tokens', '32']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/constants from .*cal\.json: fitted to run/);
  }, 120_000);
});
