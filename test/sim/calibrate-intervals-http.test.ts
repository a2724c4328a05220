import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliHere as runCli, startSimThread, type SimThread } from '../helpers/in-process-sim-cli.js';

/**
 * Over HTTP: `inferbench sim --time-scale 1.3` (a deployment 30% slower than the catalog) measured with two profiles,
 * `predict --calibrate-from` both, then a third profile measured: its figures lie inside the calibrated intervals,
 * which are narrower than the uncalibrated ones. Rows are short; the 95% level leaves room for a loaded machine, and
 * six calibration rows (not four: Student's t at 3 degrees of freedom made one e2e interval wider than the published
 * one on a CI run) keep the calibrated spread tight. The commands run in this process (main.ts's program,
 * runCliInProcess: the CLI's flags, output and exit codes without a child's start-up); `inferbench sim` serves from a
 * worker thread, its own event loop as its own process would be.
 */
let root: string;
let sim: SimThread | undefined;
let url = '';

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ib-calint-'));
  sim = await startSimThread([{ argv: ['sim', '--port', '0', '--time-scale', '1.3', '--no-prefix-caching'] }]);
  url = sim.urls[0] as string;
}, 90_000);
afterAll(async () => {
  await sim?.close();
  rmSync(root, { recursive: true, force: true });
});

type Range = { low: number; high: number };
type Stage = {
  label: string; requestThroughput: number; outputTokenThroughput: number;
  metrics: { ttftMs: { mean: number }; itlMs: { mean: number }; e2eMs: { mean: number } };
  predictionIntervals?: { basis: string; ttftMs: Range; itlMs: Range; e2eMs: Range; outputTokenThroughput: Range };
};

describe('predict --calibrate-from two runs against inferbench sim --time-scale 1.3', () => {
  it('a third profile measured lies inside the calibrated intervals, narrower than the uncalibrated ones', async () => {
    const common = ['--target', url, '--gpu', 'A100-80GB', '--max-seconds', '2', '--output-tokens', '32', '--no-progress', '--format', 'json'];
    const a = join(root, 'concurrent');
    const b = join(root, 'constant');
    const c = join(root, 'third');
    expect((await runCli(['run', ...common, '--profile', 'concurrent', '--concurrency', '1,2,8', '--out', a])).code).toBe(0);
    expect((await runCli(['run', ...common, '--profile', 'constant', '--rate', '2,4,6', '--out', b])).code).toBe(0);
    const third = ['--profile', 'concurrent', '--concurrency', '4'];
    expect((await runCli(['run', ...common, ...third, '--out', c])).code).toBe(0);
    const measured = (JSON.parse(readFileSync(join(c, 'summary.json'), 'utf8')) as { stages: Stage[] }).stages;

    const saved = join(root, 'cal.json');
    const predictThird = ['predict', ...third, '--max-seconds', '2', '--output-tokens', '32', '--interval-level', '95', '--json'];
    const cal = await runCli([...predictThird, '--calibrate-from', `${a},${b}`, '--save-calibration', saved]);
    expect(cal.code, cal.stderr).toBe(0);
    // Six rows, or five when a constant row on a starved machine could not send at its rate: calibration leaves an
    // overloaded row out (it is not on the latency curve) and says so.
    const fitted = /calibration: fitted vllm Qwen2-7B-Instruct on A100-80GB to ([56]) rows of /.exec(cal.stderr);
    expect(fitted, cal.stderr).not.toBeNull();
    if (fitted?.[1] === '5') expect(cal.stderr).toMatch(/1 overloaded row left out \(not on the curve\)/);
    expect(cal.stderr).toMatch(/spread of the fitted figures/);
    const plain = await runCli([...predictThird, '--gpu', 'A100-80GB']);
    expect(plain.code, plain.stderr).toBe(0);
    const calibrated = (JSON.parse(cal.stdout) as { stages: Stage[] }).stages[0] as Stage;
    const uncalibrated = (JSON.parse(plain.stdout) as { stages: Stage[] }).stages[0] as Stage;
    const m = measured[0] as Stage;
    expect(calibrated.predictionIntervals?.basis).toBe('calibration');
    expect(uncalibrated.predictionIntervals?.basis).toBe('published');
    const figures = ([
      ['ttftMs', m.metrics.ttftMs.mean], ['itlMs', m.metrics.itlMs.mean], ['e2eMs', m.metrics.e2eMs.mean], ['outputTokenThroughput', m.outputTokenThroughput],
    ] as const).map(([f, v]) => ({ f, v, ci: calibrated.predictionIntervals?.[f] as Range, ui: uncalibrated.predictionIntervals?.[f] as Range }));
    // Printed first, so a failing check below shows every figure beside its intervals.
    console.log(cal.stderr.split('\n').filter((l) => l.includes('spread of the fitted')).join('\n'));
    console.log(figures.map(({ f, v, ci, ui }) => `${f}: measured ${v.toFixed(2)}, calibrated ${ci.low.toFixed(2)}–${ci.high.toFixed(2)}, published ${ui.low.toFixed(2)}–${ui.high.toFixed(2)}`).join('\n'));
    for (const { f, v, ci, ui } of figures) {
      expect(v, `${f} measured ${v} in ${ci.low}–${ci.high}`).toBeGreaterThanOrEqual(ci.low);
      expect(v, `${f} measured ${v} in ${ci.low}–${ci.high}`).toBeLessThanOrEqual(ci.high);
      expect(ci.high / ci.low, `${f}: calibrated ${ci.low}–${ci.high}, published ${ui.low}–${ui.high}`).toBeLessThan(ui.high / ui.low);
    }
    // The saved calibration keeps the spreads: a later predict with --calibration FILE gives the same intervals.
    const again = await runCli([...predictThird, '--calibration', saved, '--gpu', 'A100-80GB']);
    expect(again.code, again.stderr).toBe(0);
    const reused = (JSON.parse(again.stdout) as { stages: Stage[] }).stages[0] as Stage;
    expect(reused.predictionIntervals?.basis).toBe('calibration');
    expect(reused.predictionIntervals?.itlMs.low).toBeCloseTo(calibrated.predictionIntervals?.itlMs.low as number, 6);
  }, 300_000);
});
