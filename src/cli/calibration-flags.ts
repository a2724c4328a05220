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
import { loadMeasuredRun, type MeasuredRun } from '../sim/calibrate/run-rows.js';
import { calibrationSpreads } from '../sim/calibrate/run-intervals.js';
import { DEFAULT_INTERVAL_LEVEL } from '../sim/calibrate/predict-intervals.js';
import type { CalibratedSpreads } from '../sim/calibrate/types.js';
import { type ErrorReport, FIT_METRICS, type FitMetricKey, formatErrors, scoreRun } from '../sim/calibrate/run-score.js';
import { DEFAULT_RESULTS_DIR, resolveRun } from '../store/run-store.js';

export interface CalibrationFlags {
  calibrateFrom?: string;
  calibration?: string;
  saveCalibration?: string;
  validateOn: string[];
  /** The configuration flags the user typed (the rest default, or come from the --calibrate-from run). */
  explicit: ExplicitEngineFlags;
  /** `--interval-level`: percent (0: no prediction intervals; absent: the default). */
  intervalLevel?: number;
}

/** `--interval-level <pct>`: a percent in [0, 100) (0 turns the intervals off); anything else is a usage error. */
export function parseIntervalLevel(raw: unknown): number {
  if (raw === undefined) return DEFAULT_INTERVAL_LEVEL;
  const v = Number(raw);
  if (typeof raw !== 'string' || raw.trim() === '' || !Number.isFinite(v) || v < 0 || v >= 100) {
    throw configError(`--interval-level ${String(raw)} is not a percent in [0, 100)`, 'e.g. --interval-level 80 (0: no intervals)');
  }
  return v;
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
  const out: CalibrationFlags = { validateOn: Array.isArray(flags['validateOn']) ? (flags['validateOn'] as string[]) : [], explicit, intervalLevel: parseIntervalLevel(flags['intervalLevel']) };
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
  /** `--calibrate-from` with several runs: each run folder. */
  runs?: string[];
  /** The fit's log-error spread per figure (prediction intervals are built from it). */
  spreads?: CalibratedSpreads;
  before?: ErrorReport;
  after?: ErrorReport;
  /** The figures the fit kept from getting worse, and the error the best fit of all figures would have had. */
  held?: { metrics: string[]; unconstrained: ErrorReport };
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
  const measured = cf.calibrateFrom !== undefined ? mergedRuns(cf.calibrateFrom, cf.explicit) : undefined;
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
    // How sure the fit is: the figures' spread around it and the constants' standard error (prediction intervals).
    const spreads = calibrationSpreads(measured, base, fit.calibration);
    fit.calibration.intervals = {
      spreads, runs: measured.dir.split(','), deployment: { engine: base.engine, model: base.model, gpu: base.gpu, gpus: base.gpus },
    };
    engine = { ...fit.engine, calibration: fit.calibration };
    for (const n of fit.notes) out.write(`note: ${n}\n`);
    const g = `${base.gpus > 1 ? `${base.gpus}× ` : ''}${base.gpu}`;
    const runs = measured.dir.split(',').length;
    const theRuns = runs > 1 ? `the ${runs} runs` : 'the run';
    out.write(`calibration: fitted ${base.engine} ${base.model} on ${g} to ${fit.rows} rows of ${cf.calibrateFrom} in ${(fit.elapsedMs / 1000).toFixed(1)} s (${fit.evaluations} re-predictions of ${theRuns})\n`);
    out.write(`  error on ${runs > 1 ? 'those runs' : 'that run'}, median |predicted/measured − 1|, before → after: ${formatErrors(fit.before, fit.after)}\n`);
    if (fit.held) out.write(`  ${heldLine(fit.held.metrics, fit.before, fit.held.unconstrained)}\n`);
    out.write(`  constants: ${fit.constants.map((c) => `${c.key} ${c.before.toPrecision(3)} → ${c.after.toPrecision(3)}`).join(', ')}\n`);
    out.write(`  spread of the fitted figures (log-error sd, constants' standard error): ${spreadLine(spreads)}\n`);
    if (cf.saveCalibration !== undefined) {
      saveCalibrationFile(cf.saveCalibration, fit.calibration);
      out.write(`  saved: ${cf.saveCalibration} (reuse with --calibration ${cf.saveCalibration})\n`);
    }
    const overall = (r: ErrorReport): string => `${r.overallPct.toFixed(1)}%`;
    notes.push(`engine and hardware constants fitted to the measured ${runs > 1 ? 'runs' : 'run'} ${cf.calibrateFrom} (error of ${runs > 1 ? 'their' : 'its'} worst figure on ${runs > 1 ? 'them' : 'it'} ${overall(fit.before)} → ${overall(fit.after)})`);
    report = {
      ...report, from: measured.dir, engine: describe(engine), rows: fit.rows, spreads, ...(measured.dir.includes(',') ? { runs: measured.dir.split(',') } : {}), before: fit.before, after: fit.after, ...(fit.held ? { held: fit.held } : {}), constants: fit.constants,
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

/**
 * The trade the fit declined: `kept ITL mean no worse than it started; the best fit of all figures would have taken
 * it 0.4% → 4.0% (mean over the rows 6.9% → 7.6%)`.
 */
export function heldLine(metrics: readonly FitMetricKey[], before: ErrorReport, unconstrained: ErrorReport): string {
  const label = (k: FitMetricKey): string => FIT_METRICS.find((m) => m.key === k)?.label ?? k;
  const pct = (x: number | undefined): string => (x === undefined ? '–' : `${x < 10 ? x.toFixed(1) : x.toFixed(0)}%`);
  const trades = metrics.map((k) => {
    const [b, u] = [before.perMetric[k], unconstrained.perMetric[k]];
    return `${label(k)} ${pct(b?.medianPct)} → ${pct(u?.medianPct)} (mean over the rows ${pct(b?.meanPct)} → ${pct(u?.meanPct)})`;
  });
  return `kept ${metrics.map(label).join(', ')} no worse than ${metrics.length > 1 ? 'they' : 'it'} started; the best fit of all figures would have taken ${trades.join(', ')}`;
}

const pctOf = (x: number): string => `${(100 * x).toFixed(1)}%`;
function spreadLine(s: CalibratedSpreads): string {
  const names: Record<string, string> = { ttft: 'TTFT', itl: 'ITL', e2e: 'e2e', requestThroughput: 'req/s', outputTokenThroughput: 'output tok/s' };
  return Object.entries(s).filter(([k]) => k !== 'all').map(([k, v]) => `${names[k] ?? k} ${pctOf(v.sd)}${(v.noise ?? 0) > v.sd ? ` (row noise ${pctOf(v.noise as number)})` : ''} ± ${pctOf(v.se)} (${v.n})`).join(', ') || 'none';
}

/**
 * `--calibrate-from RUN[,RUN…]`: every run read, checked to measure one deployment, and their rows put together so
 * one fit sees them all (each row keeps its own load, seed and request ids).
 */
function mergedRuns(list: string, explicit: ExplicitEngineFlags): MeasuredRun {
  const refs = list.split(',').map((r) => r.trim()).filter((r) => r !== '');
  if (refs.length === 0) throw configError('--calibrate-from needs a run folder or id', 'e.g. --calibrate-from runs/a,runs/b');
  const runs = refs.map((r) => loadMeasuredRun(runDir(r)));
  if (runs.length === 1) return runs[0] as MeasuredRun;
  const first = runs[0] as MeasuredRun;
  const who = (r: MeasuredRun): string => {
    const e = simEngineForRun(r, explicit);
    return `${e.engine} ${e.model} on ${e.gpus}× ${e.gpu}`;
  };
  for (const [i, r] of runs.entries()) {
    if (who(r) !== who(first)) throw configError(`--calibrate-from: ${refs[i]} measured ${who(r)}, but ${refs[0]} measured ${who(first)}`, 'calibrate from runs of one deployment (or give --engine/--model/--gpu/--gpus for all of them)');
  }
  return {
    dir: runs.map((r) => r.dir).join(','),
    run: first.run,
    manifest: first.manifest,
    rows: runs.flatMap((r, i) => r.rows.map((row) => ({ ...row, label: `${refs[i]}: ${row.label}`, runIndex: i }))),
    notes: runs.flatMap((r) => r.notes),
  };
}
