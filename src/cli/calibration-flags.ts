/**
 * `predict --calibrate-from RUN / --calibration FILE / --save-calibration FILE / --validate-on RUN`: which simulated
 * configuration and constants the prediction uses, and the error lines that show how well they match measurements.
 */
import type { Command } from 'commander';
import { configError } from '../core/errors.js';
import type { SimEngineOptions } from '../sim/create.js';
import { loadCalibrationFile, saveCalibrationFile } from '../sim/calibrate/file.js';
import { fitMeasuredRun, type FittedConstant } from '../sim/calibrate/run-fit.js';
import { type ExplicitEngineFlags, simEngineForRun } from '../sim/calibrate/run-config.js';
import { loadMeasuredRun } from '../sim/calibrate/run-rows.js';
import { type ErrorReport, formatErrors, scoreRun } from '../sim/calibrate/run-score.js';
import { DEFAULT_RESULTS_DIR, resolveRun } from '../store/run-store.js';

export interface CalibrationFlags {
  calibrateFrom?: string;
  calibration?: string;
  saveCalibration?: string;
  validateOn: string[];
  /** The configuration flags the user typed (the rest default, or come from the --calibrate-from run). */
  explicit: ExplicitEngineFlags;
}

/** Reads the calibration flags, and which of --engine/--model/--gpu/--gpus/--quant were typed rather than defaulted. */
export function readCalibrationFlags(flags: Record<string, unknown>, cmd: Command): CalibrationFlags {
  const str = (k: string): string | undefined => (typeof flags[k] === 'string' ? (flags[k] as string) : undefined);
  const typed = (k: string): string | undefined => (cmd.getOptionValueSource(k) === 'cli' ? str(k) : undefined);
  const gpus = typed('gpus');
  if (gpus !== undefined && !(Number.isInteger(Number(gpus)) && Number(gpus) >= 1)) throw configError(`--gpus ${gpus} is not a positive integer`);
  const explicit: ExplicitEngineFlags = {
    ...(typed('engine') !== undefined ? { engine: typed('engine') as string } : {}),
    ...(typed('model') !== undefined ? { model: typed('model') as string } : {}),
    ...(typed('gpu') !== undefined ? { gpu: typed('gpu') as string } : {}),
    ...(gpus !== undefined ? { gpus: Number(gpus) } : {}),
    ...(str('quant') !== undefined ? { quant: str('quant') as string } : {}),
  };
  const out: CalibrationFlags = { validateOn: Array.isArray(flags['validateOn']) ? (flags['validateOn'] as string[]) : [], explicit };
  if (str('calibrateFrom') !== undefined) out.calibrateFrom = str('calibrateFrom') as string;
  if (str('calibration') !== undefined) out.calibration = str('calibration') as string;
  if (str('saveCalibration') !== undefined) out.saveCalibration = str('saveCalibration') as string;
  return out;
}

/** What `--json` and summary.json keep of the calibration. */
export interface CalibrationReport {
  from?: string;
  file?: string;
  saved?: string;
  engine: { engine: string; model: string; gpu: string; gpus: number; quant?: string; kvCacheDtype?: string };
  rows?: number;
  before?: ErrorReport;
  after?: ErrorReport;
  constants?: FittedConstant[];
  evaluations?: number;
  elapsedMs?: number;
  validation: Array<{ run: string; profile: string; rows: number; before: ErrorReport; after?: ErrorReport }>;
}

/** A RUN argument: a folder path, or a run id / folder name under ./inferbench-results. */
function runDir(ref: string): string {
  try {
    return resolveRun(ref, DEFAULT_RESULTS_DIR).dir;
  } catch {
    // loadMeasuredRun says precisely what is wrong with the folder (missing, no summary.json, …).
    return ref;
  }
}

/**
 * Applies the flags: loads or fits the constants, prints the error lines to `out`, and returns the engine options
 * the prediction should use (`undefined` report: no calibration flag was given, nothing changes).
 */
export function applyCalibrationFlags(
  defaults: SimEngineOptions, cf: CalibrationFlags | undefined, out: { write(s: string): unknown },
): { engine: SimEngineOptions; report?: CalibrationReport; notes: string[] } {
  if (cf?.saveCalibration !== undefined && cf.calibrateFrom === undefined) {
    throw configError('--save-calibration writes what --calibrate-from RUN fitted', 'add --calibrate-from RUN (a measured run folder)');
  }
  if (!cf || (cf.calibrateFrom === undefined && cf.calibration === undefined && cf.validateOn.length === 0)) return { engine: defaults, notes: [] };
  const fileCal = cf.calibration !== undefined ? loadCalibrationFile(cf.calibration) : undefined;
  // Read every run first, so a bad RUN fails before a fit is spent.
  const measured = cf.calibrateFrom !== undefined ? loadMeasuredRun(runDir(cf.calibrateFrom)) : undefined;
  const validations = cf.validateOn.map((ref) => loadMeasuredRun(runDir(ref)));
  let engine: SimEngineOptions = { ...defaults, ...cf.explicit, ...(fileCal ? { calibration: fileCal } : {}) };
  const notes: string[] = [];
  const describe = (e: SimEngineOptions): CalibrationReport['engine'] => ({ engine: e.engine, model: e.model, gpu: e.gpu, gpus: e.gpus, ...(e.quant ? { quant: e.quant } : {}),
    ...(e.kvCacheDtype ? { kvCacheDtype: e.kvCacheDtype } : {}) });
  let report: CalibrationReport = { engine: describe(engine), validation: [], ...(cf.calibration ? { file: cf.calibration } : {}) };
  if (fileCal) notes.push(`constants from ${cf.calibration}: ${fileCal.note}`);

  if (measured) {
    // A typed --kv-cache-dtype (only then is it among the defaults) wins over what the run recorded.
    const base: SimEngineOptions = {
      ...simEngineForRun(measured, { ...cf.explicit, ...(defaults.kvCacheDtype ? { kvCacheDtype: defaults.kvCacheDtype } : {}) }, defaults.seed),
      // llama.cpp's --parallel / --ctx-size: a real server's run does not record them.
      ...(defaults.maxNumSeqs !== undefined ? { maxNumSeqs: defaults.maxNumSeqs } : {}),
      ...(defaults.ctxSize !== undefined ? { ctxSize: defaults.ctxSize } : {}),
    };
    const fit = fitMeasuredRun(measured, { ...base, ...(fileCal ? { calibration: fileCal } : {}) });
    engine = fit.engine;
    for (const n of fit.notes) out.write(`note: ${n}\n`);
    const g = `${base.gpus > 1 ? `${base.gpus}× ` : ''}${base.gpu}`;
    out.write(`calibration: fitted ${base.engine} ${base.model} on ${g} to ${fit.rows} rows of ${cf.calibrateFrom} in ${(fit.elapsedMs / 1000).toFixed(1)} s (${fit.evaluations} re-predictions of the run)\n`);
    out.write(`  error on that run, median |predicted/measured − 1|, before → after: ${formatErrors(fit.before, fit.after)}\n`);
    out.write(`  constants: ${fit.constants.map((c) => `${c.key} ${c.before.toPrecision(3)} → ${c.after.toPrecision(3)}`).join(', ')}\n`);
    if (cf.saveCalibration !== undefined) {
      saveCalibrationFile(cf.saveCalibration, fit.calibration);
      out.write(`  saved: ${cf.saveCalibration} (reuse with --calibration ${cf.saveCalibration})\n`);
    }
    const overall = (r: ErrorReport): string => `${r.overallPct.toFixed(1)}%`;
    notes.push(`engine and hardware constants fitted to the measured run ${cf.calibrateFrom} (error of its worst figure on it ${overall(fit.before)} → ${overall(fit.after)})`);
    report = {
      ...report, from: measured.dir, engine: describe(engine), rows: fit.rows, before: fit.before, after: fit.after, constants: fit.constants,
      evaluations: fit.evaluations, elapsedMs: Math.round(fit.elapsedMs), ...(cf.saveCalibration !== undefined ? { saved: cf.saveCalibration } : {}),
    };
  }

  // Validation: the same configuration, before (the constants the prediction would otherwise use) and after.
  const uncalibrated: SimEngineOptions = { ...engine };
  delete uncalibrated.calibration;
  const changed = measured !== undefined || fileCal !== undefined;
  validations.forEach((v, i) => {
    const name = cf.validateOn[i] as string;
    for (const n of v.notes) out.write(`note: ${n}\n`);
    const ctx = v.run.summary.context;
    if ((ctx.gpu !== undefined && ctx.gpu.toLowerCase() !== engine.gpu.toLowerCase()) || !ctx.model.toLowerCase().endsWith(engine.model.toLowerCase())) {
      out.write(`warning: ${name} measured ${ctx.model} on ${ctx.gpu ?? 'an unnamed GPU'}; it is predicted as ${engine.model} on ${engine.gpu}\n`);
    }
    const before = scoreRun(v, changed ? uncalibrated : engine);
    const after = changed ? scoreRun(v, engine) : undefined;
    const profile = v.run.summary.profile || 'run';
    out.write(`validate on ${name} (${profile}, ${v.rows.length} rows), median |predicted/measured − 1|${after ? ', before → after calibration' : ''}: ${formatErrors(before, after)}\n`);
    report.validation.push({ run: v.dir, profile, rows: v.rows.length, before, ...(after ? { after } : {}) });
  });
  return { engine, report, notes };
}
