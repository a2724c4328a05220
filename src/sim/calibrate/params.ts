/**
 * The bounded physical constants the fit may move, and which scenarios each one affects. A constant is
 * fitted only when at least MIN_ROWS scenarios with fitted figures depend on it: one row alone would turn
 * it into a per-configuration lookup, so it stays at its prior.
 */
import { resolveSimEngine } from '../create.js';
import type { SeedScenario } from '../seed-compare.js';
import { PRIORS } from './priors.js';
import type { Calibration } from './types.js';

export const MIN_ROWS = 3;

export interface Param {
  key: string;
  lo: number;
  hi: number;
  get(c: Calibration): number;
  set(c: Calibration, v: number): void;
  affects(sc: SeedScenario): boolean;
}

interface Described { gpu: string; eng: string; quant: string; moe: boolean; tp: number; served: boolean; legacy: boolean }

const described = new WeakMap<SeedScenario, Described | null>();

export function describeScenario(sc: SeedScenario): Described | null {
  let d = described.get(sc);
  if (d === undefined) {
    try {
      const r = resolveSimEngine(sc.engine);
      const q = r.description.quant;
      d = {
        gpu: r.hardware.calibrationKey ?? r.hardware.name, eng: r.profile.calKey,
        quant: q === 'fp16' || q === 'bf16' ? '' : `${r.profile.quantFamily}:${q}`, moe: r.model.moe !== undefined, tp: r.description.gpus,
        served: sc.engine.inProcess !== true,
        // Legacy kernels: the shared etaMoe instead of the engine's MoE constants (step-cost.ts).
        legacy: r.profile.quantFamily === 'legacy',
      };
    } catch {
      d = null;
    }
    described.set(sc, d);
  }
  return d;
}

/** Every calibration key in PRIORS is present in the result (a fit may start from an older calibration). */
export function withPriors(c: Calibration): Calibration {
  const out = structuredClone(c);
  for (const [k, v] of Object.entries(PRIORS.hardware)) out.hardware[k] ??= { ...v };
  for (const [k, v] of Object.entries(PRIORS.engines)) out.engines[k] ??= { ...v };
  for (const [k, v] of Object.entries(PRIORS.quant)) out.quant[k] ??= { ...v };
  return out;
}

export function buildParams(scenarios: SeedScenario[]): Param[] {
  const fitted = scenarios.filter((s) => s.metrics.some((m) => m.role === 'fit'));
  const d = (s: SeedScenario): Described | null => describeScenario(s);
  const count = (f: (x: Described) => boolean): number => fitted.filter((s) => { const x = d(s); return x !== null && f(x); }).length;
  const params: Param[] = [];
  const add = (p: Param, rows: number): void => {
    if (rows >= MIN_ROWS) params.push(p);
  };
  const known = fitted.map(d).filter((x): x is Described => x !== null);
  for (const g of new Set(known.map((x) => x.gpu))) {
    const hw = (c: Calibration) => c.hardware[g] as NonNullable<Calibration['hardware'][string]>;
    const on = (s: SeedScenario) => d(s)?.gpu === g;
    const n = count((x) => x.gpu === g);
    add({ key: `${g}.etaM`, lo: 0.4, hi: 0.95, get: (c) => hw(c).etaM, set: (c, v) => { hw(c).etaM = v; }, affects: on }, n);
    add({ key: `${g}.etaC`, lo: 0.25, hi: 0.9, get: (c) => hw(c).etaC, set: (c, v) => { hw(c).etaC = v; }, affects: on }, n);
    const nTp = count((x) => x.gpu === g && x.tp > 1);
    const nv = g.startsWith('A100') || g.startsWith('H') || g.startsWith('GH');
    const onTp = (s: SeedScenario) => d(s)?.gpu === g && (d(s)?.tp ?? 1) > 1;
    add({ key: `${g}.linkAlphaUs`, lo: 5, hi: nv ? 40 : 80, get: (c) => hw(c).linkAlphaUs, set: (c, v) => { hw(c).linkAlphaUs = v; }, affects: onTp }, nTp);
    add({ key: `${g}.linkBetaGBs`, lo: nv ? 20 : 4, hi: nv ? 300 : 32, get: (c) => hw(c).linkBetaGBs, set: (c, v) => { hw(c).linkBetaGBs = v; }, affects: onTp }, nTp);
  }
  for (const e of new Set(known.map((x) => x.eng))) {
    const ec = (c: Calibration) => c.engines[e] as NonNullable<Calibration['engines'][string]>;
    const on = (s: SeedScenario) => d(s)?.eng === e;
    const n = count((x) => x.eng === e);
    add({ key: `${e}.c0Ms`, lo: 0.2, hi: 12, get: (c) => ec(c).c0Ms, set: (c, v) => { ec(c).c0Ms = v; }, affects: on }, n);
    add({ key: `${e}.cSeqUs`, lo: 2, hi: 400, get: (c) => ec(c).cSeqUs, set: (c, v) => { ec(c).cSeqUs = v; }, affects: on }, n);
    // In-process benchmarks have no API time: only served rows inform tApiMs.
    const served = (s: SeedScenario) => on(s) && d(s)?.served === true;
    add({ key: `${e}.tApiMs`, lo: 0.5, hi: 40, get: (c) => ec(c).tApiMs, set: (c, v) => { ec(c).tApiMs = v; }, affects: served }, count((x) => x.eng === e && x.served));
  }
  for (const q of new Set(known.map((x) => x.quant).filter((x) => x !== ''))) {
    const qc = (c: Calibration) => c.quant[q] as NonNullable<Calibration['quant'][string]>;
    const on = (s: SeedScenario) => d(s)?.quant === q;
    const n = count((x) => x.quant === q);
    add({ key: `${q}.qc`, lo: 0.1, hi: 1, get: (c) => qc(c).qc, set: (c, v) => { qc(c).qc = v; }, affects: on }, n);
    add({ key: `${q}.qm`, lo: 0.2, hi: 1, get: (c) => qc(c).qm, set: (c, v) => { qc(c).qm = v; }, affects: on }, n);
  }
  // MoE kernel efficiencies per engine where enough MoE rows inform them; the shared etaMoe covers the other engines.
  const ownMoe = (x: Described): boolean => x.moe && !x.legacy;
  const moeEngines = new Set([...new Set(known.filter(ownMoe).map((x) => x.eng))].filter((e) => count((x) => ownMoe(x) && x.eng === e) >= MIN_ROWS));
  for (const e of moeEngines) {
    const ec = (c: Calibration) => c.engines[e] as NonNullable<Calibration['engines'][string]>;
    const on = (s: SeedScenario) => { const x = d(s); return x !== null && ownMoe(x) && x.eng === e; };
    const n = count((x) => ownMoe(x) && x.eng === e);
    add({ key: `${e}.etaMoe`, lo: 0.1, hi: 1, get: (c) => ec(c).etaMoe ?? c.etaMoe, set: (c, v) => { ec(c).etaMoe = v; }, affects: on }, n);
    add({ key: `${e}.moeBw`, lo: 0.2, hi: 1, get: (c) => ec(c).moeBw ?? 1, set: (c, v) => { ec(c).moeBw = v; }, affects: on }, n);
  }
  // One shared exponent for how compute and memory time overlap inside a kernel (step-cost.ts): every row informs it.
  add({ key: 'overlapP', lo: 1, hi: 3, get: (c) => c.overlapP ?? 2, set: (c, v) => { c.overlapP = v; }, affects: (s) => d(s) !== null }, known.length);
  const sharedMoe = (x: Described): boolean => x.moe && (x.legacy || !moeEngines.has(x.eng));
  add({ key: 'etaMoe', lo: 0.1, hi: 1, get: (c) => c.etaMoe, set: (c, v) => { c.etaMoe = v; }, affects: (s) => { const x = d(s); return x !== null && sharedMoe(x); } }, count(sharedMoe));
  return params;
}
