/**
 * Fit the simulator to one measured run of the user's own deployment: the hardware efficiencies (etaM, etaC; the
 * link constants when it spans GPUs) and the engine's host and API constants (c0Ms, cSeqUs, tApiMs) of that run's
 * configuration, minimising Σ log²(predicted/measured) over the figures of the run's on-curve rows.
 *
 * Two steps, both in log space: first one speed factor that stretches every time constant together (a deployment
 * 30% slower than the catalog is mostly that), then bounded coordinate descent over each constant on its own for
 * the shape (how latency grows with batch, prefill against decode).
 */
import { resolveSimEngine, type SimEngineOptions } from '../create.js';
import { LINK_PRIORS } from '../catalog/hardware.js';
import { DEFAULT_CALIBRATION } from './constants.js';
import { loadMeasuredRun, type MeasuredRun } from './run-rows.js';
import { type ErrorReport, errorReport, predictRows, scorePoints } from './run-score.js';
import type { Calibration, EngineCal, HardwareCal } from './types.js';

export interface RunFitOptions {
  /** Coordinate-descent passes after the speed factor (default 2). */
  passes?: number;
  /** Golden-section steps per constant and pass (default 8). */
  iters?: number;
  /** One line per step, for --verbose style logs. */
  log?: (line: string) => void;
  /** Say when the fit was made, in the calibration's note (tests fix it). */
  now?: Date;
}

export interface FittedConstant {
  key: string;
  before: number;
  after: number;
}

export interface RunCalibration {
  /** The full calibration: the starting one with this configuration's constants replaced. */
  calibration: Calibration;
  /** The engine options the fit was made for, with `calibration` set to the fitted constants. */
  engine: SimEngineOptions;
  runDir: string;
  rows: number;
  before: ErrorReport;
  after: ErrorReport;
  constants: FittedConstant[];
  /** Virtual re-predictions of the run the fit made. */
  evaluations: number;
  elapsedMs: number;
  /** How the run was read (rows left out, lengths rebuilt). */
  notes: string[];
}

export interface RunParam {
  key: string;
  lo: number;
  hi: number;
  /** +1: grows when the deployment is slower (a time); −1: shrinks (an efficiency or a bandwidth). */
  slower: 1 | -1;
  get(c: Calibration): number;
  set(c: Calibration, v: number): void;
}

const clone = (c: Calibration): Calibration => JSON.parse(JSON.stringify(c)) as Calibration;
const clamp = (p: RunParam, v: number): number => Math.min(p.hi, Math.max(p.lo, v));

/** The constants of the engine's configuration, made present in `cal` with the values the simulator would use. */
export function runParams(engine: SimEngineOptions, cal: Calibration): { params: RunParam[]; hwKey: string; engKey: string } {
  const r = resolveSimEngine({ ...engine, calibration: cal });
  const hwKey = r.hardware.calibrationKey ?? r.hardware.name;
  const engKey = r.profile.calKey;
  const link = LINK_PRIORS[r.hardware.link];
  const hwNow: HardwareCal = cal.hardware[hwKey] ?? cal.hardware[r.hardware.name] ?? { etaM: 0.8, etaC: 0.65, linkAlphaUs: link.alphaUs, linkBetaGBs: link.betaGBs };
  cal.hardware[hwKey] = { ...hwNow };
  // The same fallbacks as StepCostModel and resolveSimEngine, so the fit starts where the prediction stands.
  const engNow: EngineCal = cal.engines[engKey] ?? { c0Ms: 1, cSeqUs: 20, tApiMs: 5 };
  cal.engines[engKey] = { ...engNow };
  const hw = (c: Calibration): HardwareCal => c.hardware[hwKey] as HardwareCal;
  const ec = (c: Calibration): EngineCal => c.engines[engKey] as EngineCal;
  const params: RunParam[] = [
    { key: `${hwKey}.etaM`, lo: 0.02, hi: 1, slower: -1, get: (c) => hw(c).etaM, set: (c, v) => { hw(c).etaM = v; } },
    { key: `${hwKey}.etaC`, lo: 0.02, hi: 1, slower: -1, get: (c) => hw(c).etaC, set: (c, v) => { hw(c).etaC = v; } },
    { key: `${engKey}.c0Ms`, lo: 0.01, hi: 200, slower: 1, get: (c) => ec(c).c0Ms, set: (c, v) => { ec(c).c0Ms = v; } },
    { key: `${engKey}.cSeqUs`, lo: 0.1, hi: 5000, slower: 1, get: (c) => ec(c).cSeqUs, set: (c, v) => { ec(c).cSeqUs = v; } },
    { key: `${engKey}.tApiMs`, lo: 0.01, hi: 1000, slower: 1, get: (c) => ec(c).tApiMs, set: (c, v) => { ec(c).tApiMs = v; } },
  ];
  if (r.description.gpus > 1) {
    params.push(
      { key: `${hwKey}.linkAlphaUs`, lo: 0.5, hi: 500, slower: 1, get: (c) => hw(c).linkAlphaUs, set: (c, v) => { hw(c).linkAlphaUs = v; } },
      { key: `${hwKey}.linkBetaGBs`, lo: 1, hi: 2000, slower: -1, get: (c) => hw(c).linkBetaGBs, set: (c, v) => { hw(c).linkBetaGBs = v; } },
    );
  }
  return { params, hwKey, engKey };
}

/** Golden-section search for the minimum of f on [a, b]; returns the best point seen (x0 included). */
function goldenMin(f: (x: number) => number, a: number, b: number, iters: number, x0: number): number {
  const g = (Math.sqrt(5) - 1) / 2;
  let c = b - g * (b - a);
  let d = a + g * (b - a);
  let fc = f(c);
  let fd = f(d);
  for (let i = 0; i < iters; i++) {
    if (fc < fd) {
      b = d; d = c; fd = fc; c = b - g * (b - a); fc = f(c);
    } else {
      a = c; c = d; fc = fd; d = a + g * (b - a); fd = f(d);
    }
  }
  const f0 = f(x0);
  return f0 <= Math.min(fc, fd) ? x0 : fc < fd ? c : d;
}

/** Fit a measured run (already read). `engine.calibration` (default: the seed fit) is where the fit starts. */
export function fitMeasuredRun(run: MeasuredRun, engine: SimEngineOptions, opts: RunFitOptions = {}): RunCalibration {
  const started = performance.now();
  const cal = clone(engine.calibration ?? DEFAULT_CALIBRATION);
  const { params, hwKey, engKey } = runParams(engine, cal);
  let evaluations = 0;
  const lossOf = (c: Calibration): number => {
    evaluations++;
    return errorReport(scorePoints(run, predictRows(run, { ...engine, calibration: c }))).loss;
  };
  const start = params.map((p) => p.get(cal));
  const before = errorReport(scorePoints(run, predictRows(run, { ...engine, calibration: cal })));

  // 1. One speed factor for everything: e^x times slower (x < 0: faster).
  const scaled = (x: number): Calibration => {
    const c = clone(cal);
    params.forEach((p, i) => p.set(c, clamp(p, (start[i] as number) * Math.exp(p.slower * x))));
    return c;
  };
  const xBest = goldenMin((x) => lossOf(scaled(x)), Math.log(1 / 8), Math.log(8), 14, 0);
  let best = scaled(xBest);
  opts.log?.(`speed factor ${Math.exp(xBest).toFixed(3)}× the catalog's time`);

  // 2. Each constant on its own, in a window that narrows pass by pass.
  for (let pass = 0; pass < (opts.passes ?? 2); pass++) {
    const width = Math.log(4) / 2 ** pass;
    for (const p of params) {
      const x0 = Math.log(p.get(best));
      const trial = (x: number): number => {
        const c = clone(best);
        p.set(c, Math.exp(x));
        return lossOf(c);
      };
      const x = goldenMin(trial, Math.max(Math.log(p.lo), x0 - width), Math.min(Math.log(p.hi), x0 + width), opts.iters ?? 8, x0);
      p.set(best, Math.exp(x));
      opts.log?.(`pass ${pass} ${p.key} = ${p.get(best).toPrecision(4)}`);
    }
  }
  best = clone(best);
  const after = errorReport(scorePoints(run, predictRows(run, { ...engine, calibration: best })));
  const date = (opts.now ?? new Date()).toISOString().slice(0, 10);
  best.note = `fitted to run ${run.dir} (${run.run.summary.runId || run.run.name}, ${run.rows.length} rows) for ${engKey} on ${hwKey} (${date}), Σlog² objective; other constants: ${cal.note.replace(/^.*other constants: /, '')}`;
  best.fitted = [...new Set([...(engine.calibration ?? DEFAULT_CALIBRATION).fitted, hwKey, engKey])];
  return {
    calibration: best,
    engine: { ...engine, calibration: best },
    runDir: run.dir,
    rows: run.rows.length,
    before,
    after,
    constants: params.map((p, i) => ({ key: p.key, before: start[i] as number, after: p.get(best) })),
    evaluations,
    elapsedMs: performance.now() - started,
    notes: run.notes,
  };
}

/**
 * Fit the simulator's constants for `engine`'s configuration to the measured run in `runDir` (a folder written by
 * `inferbench run` or `predict --out`: sweep, grid, concurrent, capacity, …). Throws a one-line config error for a
 * folder that is missing, has no summary.json or no row with successes.
 */
export function calibrateFromRun(runDir: string, engine: SimEngineOptions, opts: RunFitOptions = {}): RunCalibration {
  return fitMeasuredRun(loadMeasuredRun(runDir), engine, opts);
}
