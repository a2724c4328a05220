/**
 * Fit the simulator to one measured run of the user's own deployment: the hardware efficiencies (etaM, etaC; the
 * link constants when it spans GPUs; a CPU's compute/memory overlap) and the engine's host and API constants (c0Ms,
 * cSeqUs, tApiMs) of that run's configuration, minimising the log² error of the run's on-curve rows with TTFT, ITL
 * and the end-to-end figures weighing alike (run-score.ts fitObjective).
 *
 * Two steps, both in log space: first one speed factor that stretches every time constant together (a deployment
 * 30% slower than the catalog is mostly that), then bounded coordinate descent over each constant on its own for
 * the shape (how latency grows with batch, prefill against decode), in windows that narrow pass by pass from ×32.
 *
 * The fit never leaves a figure worse than it found it (run-score.ts worseFigures): it returns the best point it
 * evaluated at which no figure is worse than at the start, searching again under that constraint when the best
 * point overall made one worse. The start itself qualifies, so at worst the constants are left as they were.
 */
import { resolveSimEngine, type SimEngineOptions } from '../create.js';
import { LINK_PRIORS } from '../catalog/hardware.js';
import { DEFAULT_CALIBRATION } from './constants.js';
import { loadMeasuredRun, type MeasuredRun } from './run-rows.js';
import { type ErrorReport, errorReport, fitObjective, type FitMetricKey, predictRows, scorePoints, worseFigures } from './run-score.js';
import type { Calibration, EngineCal, HardwareCal } from './types.js';

export interface RunFitOptions {
  /** Coordinate-descent passes after the speed factor (default 3). */
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
  /**
   * Present when the best fit of all figures made some of them worse than the start, so the fit kept to the best
   * point that made none worse: which figures, and the error that best fit had (the trade it declined).
   */
  held?: { metrics: FitMetricKey[]; unconstrained: ErrorReport };
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
  /** +1: grows when the deployment is slower (a time); −1: shrinks (an efficiency or a bandwidth); 0: neither (a shape). */
  slower: 1 | -1 | 0;
  get(c: Calibration): number;
  set(c: Calibration, v: number): void;
}

const clone = (c: Calibration): Calibration => JSON.parse(JSON.stringify(c)) as Calibration;

/** The most a CPU's fitted efficiency may reach: its peaks are estimates, off by up to this factor. */
const CPU_EFFICIENCY_MAX = 4;
/** Half-widths (×) of the coordinate-descent windows, pass by pass: a constant may move ×32 in the first pass. */
const PASS_WINDOWS = [32, 4, 1.5, 1.2];
/** The objective (mean log² per figure group, summed) at which the fit stops: about 0.5% off on every figure. */
const CONVERGED = 1e-4;
/** Infeasible points cost this much per log unit of worsening, over the objective (the constrained search). */
const WORSE_PENALTY = 10;
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
  // A CPU's peaks are estimates (GFLOP/s = cores × clock × FLOPs per cycle; a cpu:… spec's GB/s is a round figure the
  // user typed): an efficiency above 1 says the estimate was low. Bounded at 1, the fit pinned etaC there and bought
  // the rest of TTFT's error with the host constants, which moved ITL the wrong way.
  const cpu = r.hardware.cpu !== undefined;
  const etaHi = cpu ? CPU_EFFICIENCY_MAX : 1;
  const params: RunParam[] = [
    { key: `${hwKey}.etaM`, lo: 0.02, hi: etaHi, slower: -1, get: (c) => hw(c).etaM, set: (c, v) => { hw(c).etaM = v; } },
    { key: `${hwKey}.etaC`, lo: 0.02, hi: etaHi, slower: -1, get: (c) => hw(c).etaC, set: (c, v) => { hw(c).etaC = v; } },
    { key: `${engKey}.c0Ms`, lo: 0.01, hi: 200, slower: 1, get: (c) => ec(c).c0Ms, set: (c, v) => { ec(c).c0Ms = v; } },
    { key: `${engKey}.cSeqUs`, lo: 0.1, hi: 5000, slower: 1, get: (c) => ec(c).cSeqUs, set: (c, v) => { ec(c).cSeqUs = v; } },
    { key: `${engKey}.tApiMs`, lo: 0.01, hi: 1000, slower: 1, get: (c) => ec(c).tApiMs, set: (c, v) => { ec(c).tApiMs = v; } },
  ];
  if (cpu) {
    // How far compute and memory time overlap (step-cost.ts): the GPUs of the published tables overlap them (p ≈ 2),
    // while one CPU thread that streams the weights also does the math, so a batch's per-token compute adds to the
    // step. At p ≈ 2 the batch's ITL barely grows with the streams, and the fit could match TTFT or ITL, not both.
    params.push({ key: `${hwKey}.overlapP`, lo: 1, hi: 3, slower: 0, get: (c) => hw(c).overlapP ?? c.overlapP ?? 2, set: (c, v) => { hw(c).overlapP = v; } });
  }
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
  const reportOf = (c: Calibration): { report: ErrorReport; objective: number } => {
    evaluations++;
    const points = scorePoints(run, predictRows(run, { ...engine, calibration: c }));
    return { report: errorReport(points), objective: fitObjective(points) };
  };
  const start = params.map((p) => p.get(cal));
  const first = reportOf(cal);
  const before = first.report;
  // The best point evaluated at which no figure is worse than at the start (the start is one), and the best overall.
  let feasible = { cal, objective: first.objective, report: before };
  let overall = feasible;
  let constrained = false;
  const lossOf = (c: Calibration): number => {
    const { report, objective } = reportOf(c);
    const worse = worseFigures(before, report);
    if (worse.metrics.length === 0 && objective < feasible.objective) feasible = { cal: clone(c), objective, report };
    if (objective < overall.objective) overall = { cal: clone(c), objective, report };
    return constrained && worse.metrics.length > 0 ? objective + 1 + WORSE_PENALTY * worse.by : objective;
  };

  // 1. One speed factor for everything: e^x times slower (x < 0: faster).
  const scaled = (x: number): Calibration => {
    const c = clone(cal);
    params.forEach((p, i) => p.set(c, clamp(p, (start[i] as number) * Math.exp(p.slower * x))));
    return c;
  };
  const xBest = goldenMin((x) => lossOf(scaled(x)), Math.log(1 / 8), Math.log(8), 14, 0);
  opts.log?.(`speed factor ${Math.exp(xBest).toFixed(3)}× the catalog's time`);

  // 2. Each constant on its own, in a window that narrows pass by pass.
  const descend = (from: Calibration, windows: readonly number[], label: string): void => {
    const best = clone(from);
    for (const [pass, w] of windows.entries()) {
      // Every figure within about half a percent: nothing left for a narrower pass to find.
      if ((constrained ? feasible : overall).objective < CONVERGED) break;
      const width = Math.log(w);
      for (const p of params) {
        const x0 = Math.log(p.get(best));
        const trial = (x: number): number => {
          const c = clone(best);
          p.set(c, Math.exp(x));
          return lossOf(c);
        };
        const x = goldenMin(trial, Math.max(Math.log(p.lo), x0 - width), Math.min(Math.log(p.hi), x0 + width), opts.iters ?? 8, x0);
        p.set(best, Math.exp(x));
        opts.log?.(`${label} pass ${pass} ${p.key} = ${p.get(best).toPrecision(4)}`);
      }
    }
  };
  const windows = PASS_WINDOWS.slice(0, opts.passes ?? 3);
  descend(scaled(xBest), windows, 'fit');
  // 3. The best fit of all figures made one worse than the start: search again, from the best point that made none
  // worse, with worsening penalised.
  let held: RunCalibration['held'];
  const declined = worseFigures(before, overall.report);
  if (declined.metrics.length > 0) {
    held = { metrics: declined.metrics, unconstrained: overall.report };
    constrained = true;
    descend(feasible.cal, windows.slice(1).length ? windows.slice(1) : windows, 'held');
  }
  const best = clone(feasible.cal);
  const after = feasible.report;
  const date = (opts.now ?? new Date()).toISOString().slice(0, 10);
  best.note = `fitted to run ${run.dir} (${run.run.summary.runId || run.run.name}, ${run.rows.length} rows) for ${engKey} on ${hwKey} (${date}), log² objective (TTFT, ITL and end-to-end figures alike); other constants: ${cal.note.replace(/^.*other constants: /, '')}`;
  best.fitted = [...new Set([...(engine.calibration ?? DEFAULT_CALIBRATION).fitted, hwKey, engKey])];
  return {
    calibration: best,
    engine: { ...engine, calibration: best },
    runDir: run.dir,
    rows: run.rows.length,
    before,
    after,
    ...(held ? { held } : {}),
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
