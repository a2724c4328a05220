/** `inferbench plan`: the cheapest deployment that meets an SLO at a required load (src/plan does the work). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writePlanOutputs, planJson } from '../plan/outputs.js';
import { runPlan } from '../plan/plan.js';
import { renderPlan } from '../plan/render.js';
import type { PlanResult } from '../plan/types.js';
import type { Calibration } from '../sim/calibrate/types.js';
import { checkOutputDir } from './preflight.js';
import { resolvePlanOptions, type PlanFlags, type PlanOptions } from './plan-options.js';
import { toolVersion } from './version.js';

/** Launch commands printed under the table. */
const LAUNCHES_SHOWN = 3;

export async function planCommand(
  flags: PlanFlags,
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream },
): Promise<{ plan: PlanResult; exitCode: number }> {
  let opts = resolvePlanOptions(flags);
  if (opts.out) checkOutputDir(opts.out, '--out');
  // --verify's server command is checked before the search runs: a bad template is a usage mistake (exit 2).
  const verifyWith = opts.verify ? await import('./plan-verify.js') : undefined;
  const source = verifyWith && opts.verify ? verifyWith.serverSource(opts.verify, opts) : undefined;
  const human = opts.json ? io.stderr : io.stdout;
  let calibrationNote: string | undefined;
  if (opts.calibrationSource) {
    const loaded = await loadCalibration(flags, opts, human);
    calibrationNote = loaded.note;
    opts = resolvePlanOptions(flags, loaded.calibration);
  }
  const plan = await runPlan(opts);
  if (calibrationNote) plan.notes.push(calibrationNote);
  let text = renderPlan(plan, { top: opts.top, launches: LAUNCHES_SHOWN, all: opts.all });
  const feasible = plan.counts.feasible > 0;
  if (!opts.json) human.write(text);
  // --verify: the top candidates launched and measured (plan-verify.ts); its lines follow the plan's.
  let verified: Awaited<ReturnType<NonNullable<typeof verifyWith>['runPlanVerify']>> | undefined;
  if (verifyWith && source && feasible) {
    human.write('\n');
    verified = await verifyWith.runPlanVerify(plan, opts, source, human);
    human.write(`\n${verified.text}`);
    text = `${text}\n${verified.text}`;
  } else if (verifyWith && !feasible) {
    human.write('verify: nothing to launch — no candidate meets the SLO\n');
  }
  // With --verify, `verification[]` is the measured entries (issue 31's contract); the predicted check of the top
  // answer, `verification` without --verify, moves to `predictedCheck`; `verifications[]` is the same array.
  const base = planJson(plan, toolVersion());
  const doc = verified
    ? { ...base, verification: verified.result.entries, verifications: verified.result.entries, predictedCheck: plan.verification }
    : base;
  if (opts.json) {
    io.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
    const c = plan.counts;
    io.stderr.write(`evaluated ${c.total} candidates in ${(plan.elapsedMs / 1000).toFixed(1)} s on ${plan.threads} threads: ${c.feasible} feasible\n`);
  }
  if (opts.out) {
    const written = await writePlanOutputs(plan, text, opts.formats, opts.out, toolVersion());
    // plan.json keeps the measurements too (the same document as --json).
    if (verified && opts.formats.includes('json')) writeFileSync(join(opts.out, 'plan.json'), `${JSON.stringify(doc, null, 2)}\n`);
    io.stderr.write(`wrote ${written.length} files to ${opts.out}: ${written.map((w) => w.replace(/^.*\//, '')).join(', ')}\n`);
  }
  // 1: nothing meets the SLO at this load (as `--profile capacity` exits 1 when even the lowest load fails);
  // with --verify, also when a candidate could not be measured (130 after Ctrl-C).
  if (verified) return { plan, exitCode: verified.exitCode };
  return { plan, exitCode: plan.counts.feasible > 0 ? 0 : 1 };
}

/**
 * The simulator's constants from a calibration file, or fitted on a measured run (the same code as `predict
 * --calibrate-from`, which prints the error before and after). The fitted constants are those of the run's GPU and
 * engine: candidates on other GPUs or engines keep the catalog's.
 */
async function loadCalibration(flags: PlanFlags, opts: PlanOptions, human: NodeJS.WritableStream): Promise<{ calibration: Calibration; note: string }> {
  const { applyCalibrationFlags } = await import('./calibration-flags.js');
  const one = (xs: readonly string[] | readonly number[]): string | number | undefined => (xs.length === 1 ? xs[0] : undefined);
  const { engines, gpus, tp, quants } = opts.axes;
  // A single value of a narrowed axis names the run's configuration, as predict's flags do; lists leave it to the run.
  const explicit = {
    ...(one(engines) !== undefined ? { engine: one(engines) as string } : {}),
    model: opts.job.model,
    ...(one(gpus) !== undefined ? { gpu: one(gpus) as string } : {}),
    ...(flags.tp !== undefined && one(tp) !== undefined ? { gpus: one(tp) as number } : {}),
    ...(flags.quant !== undefined && one(quants) !== undefined ? { quant: one(quants) as string } : {}),
  };
  const cf = {
    validateOn: [],
    explicit,
    ...(flags.calibrateFrom ? { calibrateFrom: flags.calibrateFrom } : {}),
    ...(flags.calibration ? { calibration: flags.calibration } : {}),
    // --save-calibration without --calibrate-from is --verify's (plan-verify.ts writes it after measuring).
    ...(flags.saveCalibration && flags.calibrateFrom ? { saveCalibration: flags.saveCalibration } : {}),
  };
  const defaults = { engine: engines[0] as string, model: opts.job.model, gpu: gpus[0] as string, gpus: tp[0] as number, seed: opts.job.seed };
  const applied = applyCalibrationFlags(defaults, cf, human);
  const calibration = applied.engine.calibration;
  if (!calibration) throw new Error('calibration flags gave no constants');
  const e = applied.report?.engine ?? applied.engine;
  return {
    calibration,
    note: `simulator constants ${flags.calibrateFrom ? `fitted on ${flags.calibrateFrom}` : `from ${flags.calibration}`} (${e.engine} on ${e.gpu}): the ${e.gpu} constants apply to every candidate on ${e.gpu}, the ${e.engine} ones to every ${e.engine} candidate, the rest are the catalog's`,
  };
}
