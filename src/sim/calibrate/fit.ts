/**
 * Fit the calibration constants on the seed tables: minimise Σ log²(pred/published) over the figures
 * marked `fit`, by bounded coordinate descent in log space. Usage:
 *   npx tsx src/sim/calibrate/fit.ts [--seeds DIR] [--passes N] [--write] [--loo]
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { resolveSimEngine } from '../create.js';
import { type SeedScenario, seedScenarios, simulateScenario } from '../seed-compare.js';
import { parseSeedFile } from '../seeds.js';
import { DEFAULT_CALIBRATION } from './constants.js';
import { PRIORS } from './priors.js';
import type { Calibration } from './types.js';

interface Param {
  key: string;
  lo: number;
  hi: number;
  get(c: Calibration): number;
  set(c: Calibration, v: number): void;
  /** Scenarios whose prediction depends on this parameter. */
  affects(sc: SeedScenario): boolean;
}

const clone = (c: Calibration): Calibration => JSON.parse(JSON.stringify(c)) as Calibration;

function describe(sc: SeedScenario): { gpu: string; eng: string; quant: string; family: string; moe: boolean; tp: number } {
  const r = resolveSimEngine(sc.engine);
  return {
    gpu: r.hardware.calibrationKey ?? r.hardware.name, eng: r.profile.calKey, quant: r.description.quant,
    family: r.profile.quantFamily, moe: r.model.moe !== undefined, tp: r.description.gpus,
  };
}

export function buildParams(scenarios: SeedScenario[]): Param[] {
  const info = new Map(scenarios.map((s) => [s, describe(s)]));
  const d = (s: SeedScenario) => info.get(s) as ReturnType<typeof describe>;
  const params: Param[] = [];
  const gpus = new Set(scenarios.map((s) => d(s).gpu));
  const engines = new Set(scenarios.map((s) => d(s).eng));
  const quants = new Set(scenarios.filter((s) => !['fp16', 'bf16'].includes(d(s).quant)).map((s) => `${d(s).family}:${d(s).quant}`));
  for (const g of gpus) {
    const hw = (c: Calibration) => c.hardware[g] as NonNullable<Calibration['hardware'][string]>;
    params.push(
      { key: `${g}.etaM`, lo: 0.4, hi: 0.95, get: (c) => hw(c).etaM, set: (c, v) => { hw(c).etaM = v; }, affects: (s) => d(s).gpu === g },
      { key: `${g}.etaC`, lo: 0.25, hi: 0.9, get: (c) => hw(c).etaC, set: (c, v) => { hw(c).etaC = v; }, affects: (s) => d(s).gpu === g },
    );
    if (scenarios.some((s) => d(s).gpu === g && d(s).tp > 1)) {
      const nv = g.startsWith('A100') || g.startsWith('H');
      params.push(
        { key: `${g}.linkAlphaUs`, lo: 5, hi: nv ? 40 : 80, get: (c) => hw(c).linkAlphaUs, set: (c, v) => { hw(c).linkAlphaUs = v; }, affects: (s) => d(s).gpu === g && d(s).tp > 1 },
        { key: `${g}.linkBetaGBs`, lo: nv ? 20 : 4, hi: nv ? 300 : 32, get: (c) => hw(c).linkBetaGBs, set: (c, v) => { hw(c).linkBetaGBs = v; }, affects: (s) => d(s).gpu === g && d(s).tp > 1 },
      );
    }
  }
  for (const e of engines) {
    const ec = (c: Calibration) => c.engines[e] as NonNullable<Calibration['engines'][string]>;
    params.push(
      { key: `${e}.c0Ms`, lo: 0.2, hi: 12, get: (c) => ec(c).c0Ms, set: (c, v) => { ec(c).c0Ms = v; }, affects: (s) => d(s).eng === e },
      { key: `${e}.cSeqUs`, lo: 2, hi: 400, get: (c) => ec(c).cSeqUs, set: (c, v) => { ec(c).cSeqUs = v; }, affects: (s) => d(s).eng === e },
      { key: `${e}.tApiMs`, lo: 0.5, hi: 40, get: (c) => ec(c).tApiMs, set: (c, v) => { ec(c).tApiMs = v; }, affects: (s) => d(s).eng === e },
    );
  }
  for (const q of quants) {
    const qc = (c: Calibration) => c.quant[q] as NonNullable<Calibration['quant'][string]>;
    const hit = (s: SeedScenario) => `${d(s).family}:${d(s).quant}` === q;
    params.push(
      { key: `${q}.qc`, lo: 0.1, hi: 1, get: (c) => qc(c).qc, set: (c, v) => { qc(c).qc = v; }, affects: hit },
      { key: `${q}.qm`, lo: 0.2, hi: 1, get: (c) => qc(c).qm, set: (c, v) => { qc(c).qm = v; }, affects: hit },
    );
  }
  if (scenarios.some((s) => d(s).moe)) {
    params.push({ key: 'etaMoe', lo: 0.1, hi: 1, get: (c) => c.etaMoe, set: (c, v) => { c.etaMoe = v; }, affects: (s) => d(s).moe });
  }
  return params;
}

export interface FitPoint {
  table: string;
  row: string;
  metric: string;
  published: number;
  predicted: number;
}

/** Predictions for the `fit` figures of the given scenarios under calibration `cal`. */
export function predictFitPoints(scenarios: SeedScenario[], cal: Calibration): FitPoint[] {
  const out: FitPoint[] = [];
  for (const sc of scenarios) {
    const fitMetrics = sc.metrics.filter((m) => m.role === 'fit');
    if (!fitMetrics.length) continue;
    const s = simulateScenario({ ...sc, engine: { ...sc.engine, calibration: cal } });
    for (const m of fitMetrics) out.push({ table: sc.table, row: sc.row, metric: m.metric, published: m.published, predicted: m.pick(s) });
  }
  return out;
}

const loss = (pts: FitPoint[]): number =>
  pts.reduce((a, p) => a + (Number.isFinite(p.predicted) && p.predicted > 0 ? Math.log(p.predicted / p.published) ** 2 : 25), 0);

/** Bounded coordinate descent in log space (golden-section per coordinate). */
export function fitCalibration(
  scenarios: SeedScenario[], start: Calibration,
  opts: { passes?: number; iters?: number; only?: string[]; log?: (s: string) => void } = {},
): Calibration {
  const cal = clone(start);
  const params = buildParams(scenarios).filter((p) => !opts.only || opts.only.includes(p.key));
  const fitScen = scenarios.filter((s) => s.metrics.some((m) => m.role === 'fit'));
  for (let pass = 0; pass < (opts.passes ?? 2); pass++) {
    for (const p of params) {
      const sub = fitScen.filter(p.affects);
      if (!sub.length) {
        // No data left for this constant (leave-one-out): fall back to its prior.
        p.set(cal, p.get(PRIORS));
        continue;
      }
      const f = (x: number): number => {
        p.set(cal, Math.exp(x));
        return loss(predictFitPoints(sub, cal));
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
      opts.log?.(`pass ${pass} ${p.key} = ${p.get(cal).toPrecision(4)} (subset loss ${best.toFixed(3)})`);
    }
  }
  return cal;
}

function stats(pts: FitPoint[]): { n: number; median: number; max: number } {
  const e = pts.map((p) => Math.abs(p.predicted / p.published - 1) * 100).sort((a, b) => a - b);
  return { n: e.length, median: e[Math.floor(e.length / 2)] ?? NaN, max: e[e.length - 1] ?? NaN };
}

/** Leave one configuration (table) out: refit the constants it shares with the rest without it; constants only it informs revert to priors. */
function loo(scenarios: SeedScenario[], cal: Calibration, only?: string[]): void {
  const all: FitPoint[] = [];
  for (const table of [...new Set(scenarios.map((s) => s.table))]) {
    if (only && !only.some((o) => table.includes(o))) continue;
    const held = scenarios.filter((s) => s.table === table);
    const rest = scenarios.filter((s) => s.table !== table);
    const restKeys = new Set(buildParams(rest).map((p) => p.key));
    const base = clone(cal);
    const heldParams = buildParams(held);
    for (const p of heldParams) if (!restKeys.has(p.key)) p.set(base, p.get(PRIORS));
    const refit = fitCalibration(rest, base, { passes: 1, iters: 5, only: heldParams.map((p) => p.key) });
    const pts = predictFitPoints(held, refit);
    all.push(...pts);
    console.error(`LOO ${table}: ${JSON.stringify(stats(pts))}`);
  }
  console.log(`leave-one-config-out: ${JSON.stringify(stats(all))}`);
  for (const p of all) console.log(`LOO ${p.table} | ${p.row} | ${p.metric} | ${p.published} | ${p.predicted.toFixed(2)} | ${((p.predicted / p.published - 1) * 100).toFixed(1)}%`);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const arg = (k: string): string | undefined => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : undefined; };
  const dir = arg('--seeds') ?? fileURLToPath(new URL('../../../data/seeds', import.meta.url));
  const tables = readdirSync(dir).filter((f) => f.endsWith('.txt')).flatMap((f) => parseSeedFile(`${dir}/${f}`));
  const scenarios = seedScenarios(tables);
  const t0 = performance.now();
  const log = (s: string): void => console.error(s);
  if (args.includes('--loo-only')) {
    loo(scenarios, DEFAULT_CALIBRATION, arg('--tables')?.split(','));
    return;
  }
  const before = predictFitPoints(scenarios, PRIORS);
  const cal = fitCalibration(scenarios, PRIORS, { passes: Number(arg('--passes') ?? 2), iters: Number(arg('--iters') ?? 6), log });
  cal.note = `fitted on ${dir.replace(/^.*\/(data|shared)\/seeds/, '$1/seeds')} (${new Date().toISOString().slice(0, 10)}), Σlog² objective`;
  cal.fitted = [...new Set(buildParams(scenarios).map((p) => p.key.split('.')[0] as string))];
  const after = predictFitPoints(scenarios, cal);
  console.log(`priors: ${JSON.stringify(stats(before))}\nfitted: ${JSON.stringify(stats(after))} (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  for (const p of after) console.log(`IN  ${p.table} | ${p.row} | ${p.metric} | ${p.published} | ${p.predicted.toFixed(2)} | ${((p.predicted / p.published - 1) * 100).toFixed(1)}%`);
  if (args.includes('--write')) {
    const file = fileURLToPath(new URL('./constants.ts', import.meta.url));
    writeFileSync(file, `import type { Calibration } from './types.js';\n\n/** Default calibration, generated by \`npx tsx src/sim/calibrate/fit.ts --write\`. Do not edit by hand. */\nexport const DEFAULT_CALIBRATION: Calibration = ${JSON.stringify(cal, null, 2)};\n`);
    console.error(`wrote ${file}`);
  }
  if (args.includes('--loo')) loo(scenarios, cal);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
