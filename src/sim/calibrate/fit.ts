/**
 * Fit the calibration constants on the seed tables and the public tables together: minimise
 * Σ w·log²(pred/published) over the figures marked `fit`, by bounded coordinate descent in log space.
 *   npx tsx src/sim/calibrate/fit.ts [--seeds DIR] [--corpus FILE | --no-corpus] [--tables T01,seed 003]
 *     [--passes N] [--iters N] [--seed-weight W] [--prior-weight W] [--write] [--loto] [--refit] [--loto-tables T06,T23]
 *     [--jobs N] [--from FILE] [--no-in-sample] [--json FILE] [--write-intervals] [--only KEY,KEY…]
 * --only KEY,…: refit only these constants (e.g. L20-48GB.linkAlphaUs,L20-48GB.etaC; a prefix such as hostScale or
 * L20-48GB takes every constant under it), every other one stays where
 * the start put them (--write keeps the start's `fitted` list and adds the keys' entries).
 * Without --loto: refit every constant on all tables (--write stores the result as DEFAULT_CALIBRATION).
 * --loto: leave one table out (each public table T01…T23 and each seed file) around the shipped DEFAULT_CALIBRATION
 * (or --from FILE): refit the constants it shares with the others without it, predict it. That is the error of the
 * simulator as shipped; --refit (or --write) first refits every constant and leaves the tables out around that.
 * --loto-only: the same as --loto (kept for scripts written before --refit).
 * --jobs N: leave-one-table-out over N child processes (N cores; every process first records all scenarios under the
 * starting constants, so the split does not move a figure). --no-in-sample: skip the first table.
 * --loto-no-refit (with --loto, one job): constants only the table left out informs go back to their priors, the shared
 * ones stay as fitted on every table — one simulation per figure instead of a refit per table (~1/10 of the time),
 * held out in what is the table's own, optimistic in what it shares.
 * --loto also prints the leave-one-table-out coverage of the 80% prediction intervals built from its residuals, pooled
 * (the method before calibration) and calibrated (nested: interval-calibration.ts); --write-intervals stores those
 * residuals and their calibration as interval-data.ts (the intervals predict and plan print).
 * Speed (evaluator.ts, replay.ts): every scenario is simulated once and then re-priced; open and multi-stream closed
 * loops through a surrogate re-recorded at the start of every pass. Reported figures come from full simulations.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configError, isUserError } from '../../core/errors.js';
import { type SeedScenario, seedScenarios } from '../seed-compare.js';
import { parseSeedFile } from '../seeds.js';
import { DEFAULT_CALIBRATION } from './constants.js';
import { CORPUS_FILE, corpusScenarios, loadCorpus } from './corpus.js';
import { Evaluator, type FitPoint, medianAbsPct, weightedLoss } from './evaluator.js';
import { loadCalibrationFile } from './file.js';
import { lotoInChildren, shareGroups } from './loto-jobs.js';
import { intervalData, printCoverage, writeIntervalData } from './intervals-build.js';
import { buildParams as buildCorpusParams, type Param, withPriors } from './params.js';
import { PRIORS } from './priors.js';
import type { Calibration } from './types.js';

export type { FitPoint } from './evaluator.js';
export { buildCorpusParams as buildParams };

/** Predictions for the `fit` figures of the given scenarios under calibration `cal` (full simulations). */
export function predictFitPoints(scenarios: SeedScenario[], cal: Calibration): FitPoint[] {
  return new Evaluator().points(scenarios, cal);
}

/** The calibration entries the given constants belong to: "vllm-0.2.c0Ms" → "vllm-0.2", "etaMoe" stays. */
export function fittedKeys(params: Param[]): string[] {
  return [...new Set(params.map((p) => (p.key.includes('.') ? p.key.slice(0, p.key.lastIndexOf('.')) : p.key)))];
}

const groupSizes = (pts: FitPoint[]): Map<string, number> => {
  const m = new Map<string, number>();
  for (const p of pts) m.set(p.group, (m.get(p.group) ?? 0) + 1);
  return m;
};

export interface FitOptions {
  iters?: number;
  log?: (s: string) => void;
  groupWeight?: (group: string) => number;
  /** Weight of each constant's log-normal prior (σ = ln 2) against the figures' loss (default DEFAULT_PRIOR_WEIGHT). */
  priorWeight?: number;
}

/**
 * A constant twice its prior costs as much as one figure 73% off in a table of ~100 figures (each weighs 1/√n): enough
 * to keep constants that a few rows of one table inform near their priors, small next to what whole tables say.
 * Chosen by leave-one-table-out error (0.005 and 0.03 measured: docs/accuracy.md).
 */
export const DEFAULT_PRIOR_WEIGHT = 0.03;

/** --only's keys name a constant ("L20-48GB.etaC") or every constant under a prefix ("hostScale", "L20-48GB"). */
export function onlyMatches(key: string, only: readonly string[]): boolean {
  return only.some((k) => key === k || key.startsWith(`${k}.`));
}

/** Bounded coordinate descent in log space (golden-section per coordinate). */
export function fitCalibration(
  scenarios: SeedScenario[], start: Calibration,
  opts: FitOptions & { passes?: number; only?: string[]; evaluator?: Evaluator } = {},
): Calibration {
  const cal = withPriors(start);
  const priors = withPriors(PRIORS);
  const priorWeight = opts.priorWeight ?? DEFAULT_PRIOR_WEIGHT;
  const ev = opts.evaluator ?? new Evaluator();
  const params = buildCorpusParams(scenarios).filter((p) => !opts.only || onlyMatches(p.key, opts.only));
  const fitScen = scenarios.filter((s) => s.metrics.some((m) => m.role === 'fit'));
  const sizes = groupSizes(ev.points(fitScen, cal));
  for (let pass = 0; pass < (opts.passes ?? 2); pass++) {
    // Surrogate traces (open and multi-stream closed loops) re-recorded around the current constants.
    if (pass > 0) ev.refresh(fitScen, cal);
    for (const p of params) {
      const sub = fitScen.filter(p.affects);
      // The prior as a log-normal penalty (σ = ln 2): a constant that few figures inform stays near its physical prior.
      const x0Prior = Math.log(p.get(priors));
      const f = (x: number): number => {
        p.set(cal, Math.exp(x));
        return weightedLoss(ev.points(sub, cal), sizes, opts.groupWeight) + priorWeight * ((x - x0Prior) / Math.LN2) ** 2;
      };
      const x0 = Math.log(p.get(cal));
      const width = pass === 0 ? Math.log(p.hi / p.lo) : Math.log(p.hi / p.lo) / 3;
      let a = Math.max(Math.log(p.lo), x0 - width / 2);
      let b = Math.min(Math.log(p.hi), x0 + width / 2);
      const g = (Math.sqrt(5) - 1) / 2;
      let c = b - g * (b - a);
      let dd = a + g * (b - a);
      let fc = f(c);
      let fd = f(dd);
      for (let i = 0; i < (opts.iters ?? 6); i++) {
        if (fc < fd) {
          b = dd; dd = c; fd = fc; c = b - g * (b - a); fc = f(c);
        } else {
          a = c; c = dd; fc = fd; dd = a + g * (b - a); fd = f(dd);
        }
      }
      const f0 = f(x0);
      const best = Math.min(fc, fd, f0);
      p.set(cal, Math.exp(best === f0 ? x0 : best === fc ? c : dd));
      opts.log?.(`pass ${pass} ${p.key} = ${p.get(cal).toPrecision(4)} (subset loss ${best.toFixed(3)}, ${sub.length} scenarios)`);
    }
  }
  return cal;
}

const FAMILIES = ['ttft-low', 'ttft', 'itl', 'out-sat', 'out', 'reqs', 'e2e'] as const;

export interface ErrorTable {
  /** Median |error| % per family over all points, and per group. */
  overall: Record<string, { n: number; median: number }>;
  groups: Record<string, Record<string, { n: number; median: number }>>;
}

export function errorTable(pts: FitPoint[]): ErrorTable {
  const cell = (xs: FitPoint[]) => ({ n: xs.length, median: medianAbsPct(xs) });
  const overall: ErrorTable['overall'] = {};
  const groups: ErrorTable['groups'] = {};
  for (const f of FAMILIES) {
    const xs = pts.filter((p) => p.family === f);
    if (xs.length) overall[f] = cell(xs);
  }
  overall['all'] = cell(pts);
  for (const g of [...new Set(pts.map((p) => p.group))].sort()) {
    const row: Record<string, { n: number; median: number }> = {};
    for (const f of FAMILIES) {
      const xs = pts.filter((p) => p.group === g && p.family === f);
      if (xs.length) row[f] = cell(xs);
    }
    row['all'] = cell(pts.filter((p) => p.group === g));
    groups[g] = row;
  }
  return { overall, groups };
}

export function printErrorTable(title: string, t: ErrorTable, out: (s: string) => void): void {
  const fmt = (c?: { n: number; median: number }) => (c ? `${c.median.toFixed(1)}% (${c.n})` : '—');
  out(`\n${title}: median |predicted/published − 1| (figures)`);
  out(`| table | ${FAMILIES.join(' | ')} | all |`);
  out(`|---|${FAMILIES.map(() => '---:').join('|')}|---:|`);
  for (const [g, row] of Object.entries(t.groups)) out(`| ${g} | ${FAMILIES.map((f) => fmt(row[f])).join(' | ')} | ${fmt(row['all'])} |`);
  out(`| **all** | ${FAMILIES.map((f) => fmt(t.overall[f])).join(' | ')} | ${fmt(t.overall['all'])} |`);
}

/**
 * Leave one table group out: constants only that group informs go back to their priors, the constants it shares
 * with the rest are refitted without it (one pass), then its figures are predicted.
 */
export function leaveOneTableOut(
  scenarios: SeedScenario[], cal: Calibration, ev: Evaluator,
  opts: FitOptions & { groups?: string[]; noRefit?: boolean; onGroup?: (pts: FitPoint[]) => void } = {},
): FitPoint[] {
  const all: FitPoint[] = [];
  const priors = withPriors(PRIORS);
  const present = [...new Set(scenarios.map((s) => s.group ?? s.table))].sort();
  // In the order asked for (--loto-tables), else sorted.
  for (const group of opts.groups ? opts.groups.filter((g) => present.includes(g)) : present) {
    const t0 = performance.now();
    const held = scenarios.filter((s) => (s.group ?? s.table) === group);
    const rest = scenarios.filter((s) => (s.group ?? s.table) !== group);
    const restKeys = new Set(buildCorpusParams(rest).map((p) => p.key));
    const base = withPriors(cal);
    const heldParams = allParamsTouching(held, rest);
    for (const p of heldParams) if (!restKeys.has(p.key)) p.set(base, p.get(priors));
    // --loto-no-refit: the shared constants stay where the full fit put them (a quick, somewhat optimistic stand-in).
    const refit = opts.noRefit ? base : fitCalibration(rest, base, {
      ...opts, log: undefined, passes: 1, iters: opts.iters ?? 5, only: heldParams.map((p) => p.key), evaluator: ev,
    });
    const pts = ev.points(held, refit, ['fit'], true);
    all.push(...pts);
    opts.onGroup?.(all);
    opts.log?.(`LOTO ${group}: median ${medianAbsPct(pts).toFixed(1)}% over ${pts.length} figures (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  }
  return all;
}

/** The constants (fitted on all tables) that the held-out rows depend on. */
function allParamsTouching(held: SeedScenario[], rest: SeedScenario[]): Param[] {
  return buildCorpusParams([...held, ...rest]).filter((p) => held.some(p.affects));
}

/** fit.ts's flags: those that take a value, and switches. */
const VALUE_FLAGS = ['--seeds', '--corpus', '--tables', '--passes', '--iters', '--seed-weight', '--prior-weight',
  '--loto-tables', '--loto-iters', '--jobs', '--from', '--json', '--only'];
const SWITCHES = ['--no-corpus', '--write', '--loto', '--loto-only', '--refit', '--no-in-sample', '--write-intervals', '--loto-no-refit'];

/** A misspelt or unknown flag, or one missing its value, is a usage error rather than silently ignored. */
function checkFlags(args: string[]): void {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (VALUE_FLAGS.includes(a)) {
      if (args[i + 1] === undefined || args[i + 1]?.startsWith('--')) throw configError(`${a} needs a value`, `e.g. ${a} ${a === '--jobs' ? '2' : 'VALUE'}`);
      i++;
    } else if (!SWITCHES.includes(a)) {
      throw configError(`unknown argument ${a}`, `fit.ts takes ${[...VALUE_FLAGS.map((f) => `${f} X`), ...SWITCHES].join(', ')}`);
    }
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  checkFlags(args);
  const arg = (k: string): string | undefined => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : undefined; };
  const t0 = performance.now();
  const dir = arg('--seeds') ?? fileURLToPath(new URL('../../../data/seeds', import.meta.url));
  const tables = readdirSync(dir).filter((f) => f.endsWith('.txt')).flatMap((f) => parseSeedFile(`${dir}/${f}`));
  let scenarios = seedScenarios(tables);
  if (!args.includes('--no-corpus')) {
    const { scenarios: cs, skipped } = corpusScenarios(loadCorpus(arg('--corpus') ?? CORPUS_FILE));
    for (const s of skipped) console.error(`skipped row ${s.row.id}: ${s.reason}`);
    scenarios = [...scenarios, ...cs];
  }
  const only = arg('--tables')?.split(',');
  if (only) scenarios = scenarios.filter((s) => only.includes(s.group ?? s.table));
  // --seed-weight W: the seed files' figures weigh W times a public table's (default 1).
  const seedWeight = Number(arg('--seed-weight') ?? 1);
  const groupWeight = (g: string): number => (g.startsWith('seed') ? seedWeight : 1);
  // --prior-weight W: how hard each constant is held to its prior (0: not at all).
  const priorWeight = Number(arg('--prior-weight') ?? DEFAULT_PRIOR_WEIGHT);
  const log = (s: string): void => console.error(s);
  const out = (s: string): void => console.log(s);
  // --from FILE: start from a saved calibration (a --json report's `calibration`, or --save-calibration's file).
  const from = arg('--from');
  const start = withPriors(from ? loadCalibrationFile(from, '--from') : DEFAULT_CALIBRATION);
  const ev = new Evaluator();
  const report: Record<string, unknown> = {};
  if (!args.includes('--no-in-sample')) {
    const before = ev.points(scenarios, start, ['fit'], true);
    printErrorTable(`${from ?? 'shipped DEFAULT_CALIBRATION'}, in sample`, errorTable(before), out);
    const failed = before.filter((p) => !Number.isFinite(p.predicted));
    if (failed.length) out(`(${failed.length} figures the simulator cannot run: ${[...new Set(failed.map((p) => p.row))].join(', ')})`);
    report['before'] = errorTable(before);
    report['beforePoints'] = before;
  }
  let cal = start;
  // --loto alone measures the shipped constants; a full refit comes first only when asked for (or to be written).
  // --loto-only never refits: LOTO child processes pass it with --from.
  const loto = args.includes('--loto') || args.includes('--loto-only');
  const refit = !args.includes('--loto-only') && (!loto || args.includes('--refit') || args.includes('--write'));
  // --only KEY,…: a partial refit (the constants a change added or re-scoped), the others held where they are.
  const onlyKeys = arg('--only')?.split(',');
  if (onlyKeys) {
    const known = buildCorpusParams(scenarios).map((p) => p.key);
    const unknown = onlyKeys.filter((k) => !known.some((key) => onlyMatches(key, [k])));
    if (unknown.length) throw configError(`--only: no fitted constant ${unknown.join(', ')} in these tables`, `constants: ${known.join(', ')}`);
  }
  if (refit) {
    cal = fitCalibration(scenarios, start, {
      passes: Number(arg('--passes') ?? 2), iters: Number(arg('--iters') ?? 6), log, evaluator: ev, groupWeight, priorWeight, ...(onlyKeys ? { only: onlyKeys } : {}),
    });
    const day = new Date().toISOString().slice(0, 10);
    if (onlyKeys) {
      cal.note = `${start.note}; ${onlyKeys.join(', ')} refitted with the others held (fit.ts --only, ${day})`;
      cal.fitted = [...new Set([...start.fitted, ...fittedKeys(buildCorpusParams(scenarios).filter((p) => onlyMatches(p.key, onlyKeys)))])];
    } else {
      cal.note = `fitted on data/seeds + data/public-tables (${day}), weighted Σlog² objective with log-normal priors (--prior-weight ${priorWeight})`;
      cal.fitted = fittedKeys(buildCorpusParams(scenarios));
    }
    const after = ev.points(scenarios, cal, ['fit'], true);
    printErrorTable('refitted, in sample', errorTable(after), out);
    report['after'] = errorTable(after);
    report['afterPoints'] = after;
    report['calibration'] = cal;
    out(`fit: ${((performance.now() - t0) / 1000).toFixed(0)} s (${ev.replayed} replayed scenario predictions in ${(ev.replayMs / 1000).toFixed(0)} s, ${ev.simulated} simulated in ${(ev.simulateMs / 1000).toFixed(0)} s)`);
  }
  if (loto) {
    const t1 = performance.now();
    const groups = arg('--loto-tables')?.split(',') ?? [...new Set(scenarios.map((s) => s.group ?? s.table))].sort();
    // --jobs N: the tables left out are shared over N child processes (each table's refit is independent).
    const jobs = Math.max(1, Math.floor(Number(arg('--jobs') ?? 1)) || 1);
    let pts: FitPoint[];
    if (jobs > 1) {
      const passThrough = ['--seeds', '--corpus', '--tables', '--seed-weight', '--prior-weight', '--loto-iters']
        .flatMap((k) => (arg(k) !== undefined ? [k, arg(k) as string] : []));
      if (args.includes('--no-corpus')) passThrough.push('--no-corpus');
      pts = await lotoInChildren(cal, shareGroups(scenarios, groups, jobs), { script: fileURLToPath(import.meta.url), passThrough, log });
    } else {
      const noRefit = args.includes('--loto-no-refit');
      // Without refits every held-out figure is simulated once, under its own constants: nothing to prime.
      if (!noRefit) ev.prime(scenarios, cal);
      // --json FILE is rewritten after every table, so a long run that is stopped keeps the tables it finished.
      const json = arg('--json');
      const onGroup = json ? (done: FitPoint[]): void => writeFileSync(json, `${JSON.stringify({ ...report, lotoPoints: done, partial: true }, null, 1)}\n`) : undefined;
      pts = leaveOneTableOut(scenarios, cal, ev, { iters: Number(arg('--loto-iters') ?? 4), log, groupWeight, priorWeight, groups, noRefit, ...(onGroup ? { onGroup } : {}) });
    }
    printErrorTable(`leave-one-table-out${jobs > 1 ? ` (${jobs} jobs)` : ''}${args.includes('--loto-no-refit') ? ' without refits' : ''}`, errorTable(pts), out);
    report['loto'] = errorTable(pts);
    report['lotoPoints'] = pts;
    // LOTO child processes (--loto-only) leave the coverage to the parent, which sees every table.
    if (!args.includes('--loto-only')) report['coverage'] = printCoverage(pts, out);
    if (args.includes('--write-intervals')) {
      if (refit) throw configError('--write-intervals stores the residuals of the shipped constants', 'drop --refit/--write (write the constants first, then run --loto --write-intervals)');
      log(`wrote ${writeIntervalData(intervalData(pts, `fit.ts --loto residuals of ${from ?? 'DEFAULT_CALIBRATION'} (${new Date().toISOString().slice(0, 10)})`))}`);
    }
    out(`leave-one-table-out: ${((performance.now() - t1) / 1000).toFixed(0)} s`);
  }
  out(`total run time: ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  const json = arg('--json');
  if (json) writeFileSync(json, `${JSON.stringify(report, null, 1)}\n`);
  if (args.includes('--write') && refit) {
    const file = fileURLToPath(new URL('./constants.ts', import.meta.url));
    writeFileSync(file, `import type { Calibration } from './types.js';\n\n/** Default calibration, generated by \`npx tsx src/sim/calibrate/fit.ts --write\`. Do not edit by hand. */\nexport const DEFAULT_CALIBRATION: Calibration = ${JSON.stringify(cal, null, 2)};\n`);
    console.error(`wrote ${file}`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // A user mistake (a --from file that is not a calibration, a --corpus that is not a table file) is one line, exit 2.
  await main().catch((err: unknown) => {
    if (!isUserError(err)) throw err;
    console.error(`error: ${err.message}${err.hint ? ` (${err.hint})` : ''}`);
    process.exit(2);
  });
}
