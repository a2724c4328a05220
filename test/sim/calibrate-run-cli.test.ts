import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCalibrationFile } from '../../src/sim/calibrate/file.js';
import { runCliHere as runCli, startSimThread, type SimThread } from '../helpers/in-process-sim-cli.js';

/**
 * End to end over HTTP: `inferbench sim --time-scale 1.3` is a deployment 30% slower than the catalog. One short
 * measured run of it calibrates `predict`, which is then checked on another measured run (other lengths, other
 * streams). Rows are short (1 s windows) so the test stays affordable; the error bounds leave room for real-time noise.
 * The commands run in this process (main.ts's program, runCliInProcess: the CLI's flags, output and exit codes without
 * a child's start-up); `inferbench sim` serves from a worker thread, its own event loop as its own process would be.
 */
let root: string;
let sim: SimThread | undefined;
let url = '';

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ib-calcli-'));
  sim = await startSimThread([{ argv: ['sim', '--port', '0', '--time-scale', '1.3', '--no-prefix-caching'] }]);
  url = sim.urls[0] as string;
}, 90_000);

afterAll(async () => {
  await sim?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('predict --calibrate-from against inferbench sim --time-scale 1.3', () => {
  it('calibrates on one measured run and halves the worst metric\'s error in sample and lowers it on another run (from over 15%)', async () => {
    const fitRun = join(root, 'fit');
    const checkRun = join(root, 'check');
    const common = ['--target', url, '--profile', 'concurrent', '--max-seconds', '1', '--no-progress', '--format', 'json'];
    const a = await runCli(['run', ...common, '--gpu', 'A100-80GB', '--concurrency', '1,8', '--output-tokens', '32', '--out', fitRun]);
    expect(a.code, a.stderr).toBe(0);
    // No --gpu: the run records the GPU the simulator reports (x-sim-gpu).
    const b = await runCli(['run', ...common, '--concurrency', '2,6', '--prompt-tokens', '1024', '--output-tokens', '24', '--out', checkRun]);
    expect(b.code, b.stderr).toBe(0);

    const saved = join(root, 'cal.json');
    const p = await runCli(['predict', '--calibrate-from', fitRun, '--validate-on', checkRun, '--save-calibration', saved,
      '--profile', 'concurrent', '--concurrency', '4', '--prompt-tokens', '1024', '--output-tokens', '24', '--max-seconds', '1', '--json']);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stderr).toMatch(/calibration: fitted vllm Qwen2-7B-Instruct on A100-80GB to 2 rows of .* in [\d.]+ s/);
    expect(p.stderr).toMatch(/before → after: TTFT median .*; overall .* → /);
    expect(p.stderr).toMatch(/validate on .*check \(concurrent, 2 rows\)/);
    const doc = JSON.parse(p.stdout) as {
      calibration: { engine: { gpu: string }; before: { overallPct: number }; after: { overallPct: number }; validation: Array<{ before: { overallPct: number }; after: { overallPct: number } }> };
      stages: unknown[];
    };
    const v = doc.calibration.validation[0];
    expect(doc.calibration.engine.gpu).toBe('A100-80GB');
    // overallPct is the worst metric's median error (TTFT here), not a median that req/s and tok/s could pull down.
    // The fit run has 1-s rows on a shared machine: the bounds leave room for that, and ask for a clear gain.
    // The deployment is 30% slower than the catalog, so the uncalibrated worst error is large on both runs. How low the
    // calibrated error gets depends on how the shared machine times 1-s rows (6–14% seen for the worst metric): the
    // test asks for a clear gain in sample and a gain on the other run, not a figure.
    expect(doc.calibration.before.overallPct).toBeGreaterThan(15);
    expect(doc.calibration.after.overallPct).toBeLessThan(doc.calibration.before.overallPct / 2);
    expect(v?.before.overallPct).toBeGreaterThan(15);
    expect(v?.after.overallPct).toBeLessThan(v?.before.overallPct ?? 0);
    expect(doc.stages).toHaveLength(1);
    expect(existsSync(saved)).toBe(true);
    expect(loadCalibrationFile(saved).note).toContain(fitRun);

    // The saved constants give the same validation without refitting; the run's GPU comes from --gpu here.
    const again = await runCli(['predict', '--calibration', saved, '--validate-on', checkRun, '--profile', 'synchronous', '--max-seconds', '1']);
    expect(again.code, again.stderr).toBe(0);
    const pct = (s: string): string | undefined => /validate on .*overall [\d.]+% → ([\d.]+)%/.exec(s)?.[1];
    expect(pct(again.stdout)).toBeDefined();
    expect(pct(again.stdout)).toBe(pct(p.stderr));

    // The check run took its GPU from the simulator; a run that recorded none (a real server, no --gpu) cannot be
    // fitted without being told: one line naming the flag.
    const checkSummary = JSON.parse(readFileSync(join(checkRun, 'summary.json'), 'utf8')) as { context: Record<string, unknown> };
    expect(checkSummary.context['gpu']).toBe('A100-80GB');
    const noGpuRun = join(root, 'no-gpu');
    cpSync(checkRun, noGpuRun, { recursive: true });
    delete checkSummary.context['gpu'];
    writeFileSync(join(noGpuRun, 'summary.json'), JSON.stringify(checkSummary));
    const noGpu = await runCli(['predict', '--calibrate-from', noGpuRun]);
    expect(noGpu.code).toBe(2);
    expect(noGpu.stderr.trim().split('\n')).toHaveLength(1);
    expect(noGpu.stderr).toMatch(/does not say which GPU .*pass --gpu/);
  }, 240_000);

  it('bad inputs: one line, exit 2', async () => {
    for (const args of [
      ['--calibrate-from', join(root, 'missing')],
      ['--calibrate-from', root],
      ['--calibration', join(root, 'missing.json')],
      ['--save-calibration', join(root, 'x.json')],
    ]) {
      const r = await runCli(['predict', ...args, '--profile', 'synchronous', '--max-seconds', '1']);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stderr).toMatch(/^error: /);
    }
  }, 60_000);
});
