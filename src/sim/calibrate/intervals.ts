/**
 * Prediction intervals from held-out residuals. Every published figure left out by leave-one-table-out (fit.ts --loto)
 * gives one residual r = ln(predicted / published), grouped by metric family and load regime (a cell).
 *
 * A table's figures share much of their error (one deployment, one benchmark harness, one set of constants at their
 * priors), so the residuals of other tables understate the error of a table not yet seen: quantiles pooled over
 * figures covered 66–78% of held-out figures at 80% (docs/accuracy.md). Two steps answer for that:
 * - quantiles weigh a table of a cell by n^0.75 rather than n (a figure weighs n^−0.25, n its table's figures in the
 *   cell), so a large table does not stand for the spread of all deployments alone (TABLE_WEIGHT_POWER);
 * - the base interval of a cell, [c − (c − q₁₀), c + (q₉₀ − c)] around the cell's median c, is scaled by a factor
 *   chosen by leave-one-table-out (a cross-conformal step): each table's figures get the score s = how many times the
 *   base interval's half-width (built without that table) they needed, and the interval at level L is the base one
 *   scaled by the L-quantile of the scores (`scores`, pooled over families; interval-calibration.ts computes them).
 *
 * Distance from the data: a figure whose GPU, engine (version), model family or quantization no *other* table covers
 * was predicted with that dimension's constants back at their priors (leave-one-table-out refits only what the other
 * tables share), so its residual is an out-of-family residual. A prediction for a configuration that no published
 * table covers in some dimension takes the widest of its in-family interval and the out-of-family residuals of those
 * dimensions, scaled by the out-of-family figures' own scores.
 */
import { interpolate } from '../../core/interpolate.js';
import type { FitPoint } from './evaluator.js';

export const FAMILIES = ['ttft-low', 'ttft', 'itl', 'out-sat', 'out', 'reqs', 'e2e'] as const;
export type IntervalFamily = (typeof FAMILIES)[number];
export type LoadRegime = 'low' | 'loaded' | 'saturated';
export const DIMENSIONS = ['gpu', 'engine', 'family', 'quant'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** A figure's place in the data: what it measures, at which load, and for which deployment. */
export interface ResidualPoint {
  group: string;
  family: IntervalFamily;
  regime: LoadRegime;
  /** ln(predicted / published). */
  r: number;
  deployment: Record<Dimension, string>;
}

/** A residual cell needs this many figures from this many tables, else the family's pooled residuals stand in. */
export const MIN_CELL_POINTS = 30;
export const MIN_CELL_TABLES = 3;
/** Out-of-family residuals of one dimension need this many figures, else every dimension's are pooled. */
export const MIN_NOVEL_POINTS = 15;
/**
 * A figure weighs n^(−TABLE_WEIGHT_POWER) in its cell's quantiles, n its table's figures in the cell: 0 weighs every
 * figure alike (the pooled quantiles), 1 every table alike. Chosen by the nested leave-one-table-out coverage and
 * width (docs/accuracy.md).
 */
export const TABLE_WEIGHT_POWER = 0.2;
/** The same for the leave-one-table-out scores a family's widening is read from (0: every held-out figure alike). */
export const SCORE_WEIGHT_POWER = 0.3;
/** The level the base interval of a cell is read at; the calibrated scores scale it to any level. */
export const BASE_LEVEL = 0.8;

/** The residuals an interval is read from, one ascending array per table, and how it is calibrated. */
export interface ResidualModel {
  /** `${family}|${regime}` and `${family}` (pooled over regimes). */
  cells: Record<string, number[][]>;
  /** `${family}|${dimension}` and `${family}|any`: residuals of figures novel in that dimension. */
  novel: Record<string, number[][]>;
  /** Per dimension, the values the data covers and how many tables cover each. */
  seen: Record<Dimension, Record<string, number>>;
  /** The table-weight powers the residuals' and the scores' quantiles are read with. */
  weightPower: number;
  scorePower?: number;
  /** The level the base interval is read at (BASE_LEVEL when absent). */
  baseLevel?: number;
  /**
   * Leave-one-table-out scores, one ascending array per table: `${family}` (in-family figures), `${family}|novel` or `novel` (out-of-family
   * figures, pooled over families when one family has too few), `all` (every family's in-family figures, for a family
   * with too few of its own). Absent: the intervals are the uncalibrated quantiles at the level asked for.
   */
  scores?: Record<string, number[][]>;
}

const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);

/** Linear-interpolated empirical quantile of an ascending array (q in 0..1). */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const pos = Math.min(1, Math.max(0, q)) * (xs.length - 1);
  const i = Math.floor(pos);
  const lo = xs[i] as number;
  const hi = xs[Math.min(xs.length - 1, i + 1)] as number;
  return lo + (hi - lo) * (pos - i);
}

/** The points of a weighted quantile: values ascending with their plotting positions (0 for the first, 1 for the last). */
interface Positions { xs: number[]; ps: number[] }
const positionsCache = new WeakMap<readonly (readonly number[])[], Map<number, Positions>>();

function positions(groups: readonly (readonly number[])[], power: number): Positions {
  let byPower = positionsCache.get(groups);
  if (!byPower) positionsCache.set(groups, (byPower = new Map()));
  const hit = byPower.get(power);
  if (hit) return hit;
  const items = groups.flatMap((g) => g.map((x) => ({ x, w: g.length ** -power }))).sort((a, b) => a.x - b.x);
  const xs = items.map((i) => i.x);
  const n = items.length;
  // Every figure alike: p_i = (i − 1)/(n − 1), the `quantile` above. Weighted: each figure at the middle of its weight,
  // p_i = (S_i − w_i/2)/W (S the running sum), so a table of one figure weighs as much as one of forty.
  const W = items.reduce((a, i) => a + i.w, 0);
  let S = 0;
  const ps = items.map((i, k) => {
    S += i.w;
    return power === 0 ? (n > 1 ? k / (n - 1) : 0) : (S - i.w / 2) / W;
  });
  const out = { xs, ps };
  byPower.set(power, out);
  return out;
}

/** Quantile q of residuals grouped by table, each figure weighing n^(−power) (n its table's figures). */
export function weightedQuantile(groups: readonly (readonly number[])[], q: number, power: number): number {
  const { xs, ps } = positions(groups, power);
  if (xs.length === 0) return Number.NaN;
  return interpolate(ps, xs, Math.min(1, Math.max(0, q)));
}

const count = (groups: readonly (readonly number[])[] | undefined): number => (groups ?? []).reduce((a, g) => a + g.length, 0);

/** Which dimensions of each point no other table covers. */
export function novelDimensions(points: readonly ResidualPoint[]): Map<ResidualPoint, Dimension[]> {
  const tablesOf = new Map<string, Set<string>>();
  for (const p of points) {
    for (const d of DIMENSIONS) {
      const k = `${d}=${p.deployment[d]}`;
      if (!tablesOf.has(k)) tablesOf.set(k, new Set());
      tablesOf.get(k)?.add(p.group);
    }
  }
  const out = new Map<ResidualPoint, Dimension[]>();
  for (const p of points) {
    out.set(p, DIMENSIONS.filter((d) => [...(tablesOf.get(`${d}=${p.deployment[d]}`) ?? [])].every((g) => g === p.group)));
  }
  return out;
}

/** The residual model of a set of points (all tables, or all but one for the coverage check), uncalibrated. */
export function buildResidualModel(points: readonly ResidualPoint[], weightPower = TABLE_WEIGHT_POWER, baseLevel = BASE_LEVEL): ResidualModel {
  // key → table → residuals
  const cells = new Map<string, Map<string, number[]>>();
  const novel = new Map<string, Map<string, number[]>>();
  const push = (rec: Map<string, Map<string, number[]>>, k: string, p: ResidualPoint): void => {
    if (!rec.has(k)) rec.set(k, new Map());
    const byTable = rec.get(k) as Map<string, number[]>;
    if (!byTable.has(p.group)) byTable.set(p.group, []);
    byTable.get(p.group)?.push(p.r);
  };
  for (const p of points) for (const k of [`${p.family}|${p.regime}`, p.family]) push(cells, k, p);
  // Cells too thin to stand alone are dropped: the family's pooled residuals answer for them.
  for (const [k, byTable] of cells) {
    if (k.includes('|') && (count([...byTable.values()]) < MIN_CELL_POINTS || byTable.size < MIN_CELL_TABLES)) cells.delete(k);
  }
  const nov = novelDimensions(points);
  for (const p of points) {
    const dims = nov.get(p) ?? [];
    for (const d of dims) push(novel, `${p.family}|${d}`, p);
    if (dims.length) push(novel, `${p.family}|any`, p);
  }
  const seen = Object.fromEntries(DIMENSIONS.map((d) => [d, {}])) as ResidualModel['seen'];
  const tables = new Map<string, Set<string>>();
  for (const p of points) {
    for (const d of DIMENSIONS) {
      const k = `${d}\u0000${p.deployment[d]}`;
      if (!tables.has(k)) tables.set(k, new Set());
      tables.get(k)?.add(p.group);
    }
  }
  for (const [k, groups] of tables) {
    const [d, v] = k.split('\u0000') as [Dimension, string];
    seen[d][v] = groups.size;
  }
  // Tables in name order, each table's residuals ascending: the model does not depend on the points' order.
  const grouped = (rec: Map<string, Map<string, number[]>>): Record<string, number[][]> =>
    Object.fromEntries([...rec.entries()].sort(([a], [b]) => a.localeCompare(b))
      .map(([k, byTable]) => [k, [...byTable.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, v]) => sorted(v))]));
  return { cells: grouped(cells), novel: grouped(novel), seen, weightPower, baseLevel };
}

/** A multiplicative interval: the true figure lies in [prediction × low, prediction × high] at `level`. */
export interface IntervalFactors {
  low: number;
  high: number;
  /** Residuals it was read from, and where from (`ttft|loaded`, `ttft|gpu` for out-of-family …). */
  n: number;
  source: string;
}

/** The residual sets for a family and regime: its cell, then the out-of-family ones of the `unseen` dimensions. */
export function residualsFor(model: ResidualModel, family: IntervalFamily, regime: LoadRegime, unseen: readonly Dimension[] = []): Array<{ groups: number[][]; source: string }> {
  const cell = model.cells[`${family}|${regime}`] ? `${family}|${regime}` : family;
  const out = [{ groups: model.cells[cell] ?? [], source: cell }];
  for (const d of unseen) {
    const k = count(model.novel[`${family}|${d}`]) >= MIN_NOVEL_POINTS ? `${family}|${d}` : `${family}|any`;
    if (count(model.novel[k])) out.push({ groups: model.novel[k] as number[][], source: k });
  }
  return out;
}

/**
 * The base interval of a figure in residual space, read at BASE_LEVEL: its cell's median c and quantiles [lo, hi],
 * and the envelope [elo, ehi] of those and the out-of-family residuals of the unseen dimensions (with its source).
 */
export interface BaseInterval { c: number; lo: number; hi: number; elo: number; ehi: number; n: number; source: string; envelopeSource: string }

export function baseInterval(model: ResidualModel, family: IntervalFamily, regime: LoadRegime, unseen: readonly Dimension[] = []): BaseInterval | undefined {
  const [own, ...others] = residualsFor(model, family, regime, unseen);
  if (!own || count(own.groups) < 2) return undefined;
  const q = (g: number[][], p: number): number => weightedQuantile(g, p, model.weightPower);
  const base = model.baseLevel ?? BASE_LEVEL;
  const lo = q(own.groups, (1 - base) / 2);
  const hi = q(own.groups, (1 + base) / 2);
  const b: BaseInterval = { c: q(own.groups, 0.5), lo, hi, elo: lo, ehi: hi, n: count(own.groups), source: own.source, envelopeSource: own.source };
  for (const s of others.filter((o) => count(o.groups) >= 2)) {
    const slo = q(s.groups, (1 - base) / 2);
    const shi = q(s.groups, (1 + base) / 2);
    if (slo < b.elo || shi > b.ehi) b.envelopeSource = s.source;
    b.elo = Math.min(b.elo, slo);
    b.ehi = Math.max(b.ehi, shi);
  }
  return b;
}

/** The scores an interval of this family is scaled by: its own, else every family's pooled (undefined: uncalibrated). */
export function scoresFor(model: ResidualModel, family: IntervalFamily, novel: boolean): number[][] | undefined {
  const s = model.scores;
  if (!s) return undefined;
  return novel ? s[`${family}|novel`] ?? s['novel'] ?? s[family] ?? s['all'] : s[family] ?? s['all'];
}

/**
 * Interval factors at `level` (0..1). Calibrated: the base interval scaled by the level's quantile of the family's
 * scores, and for unseen dimensions also the envelope scaled by the out-of-family scores (the wider of the two).
 * Uncalibrated (a model without scores): the widest of the residual sets' quantiles at the level.
 */
export function intervalFactors(model: ResidualModel, family: IntervalFamily, regime: LoadRegime, level: number, unseen: readonly Dimension[] = []): IntervalFactors | undefined {
  const inScores = scoresFor(model, family, false);
  if (!count(inScores)) return uncalibratedFactors(model, family, regime, level, unseen);
  const b = baseInterval(model, family, regime, unseen);
  if (!b) return undefined;
  const k = weightedQuantile(inScores as number[][], level, model.scorePower ?? SCORE_WEIGHT_POWER);
  // r = ln(pred/published): the truth is pred·e^(−r), so the high end in r gives the low factor.
  let rlo = b.c - k * (b.c - b.lo);
  let rhi = b.c + k * (b.hi - b.c);
  let source = b.source;
  if (unseen.length) {
    const kn = weightedQuantile(scoresFor(model, family, true) ?? (inScores as number[][]), level, model.scorePower ?? SCORE_WEIGHT_POWER);
    const nlo = b.c - kn * (b.c - b.elo);
    const nhi = b.c + kn * (b.ehi - b.c);
    if (nlo < rlo || nhi > rhi) source = b.envelopeSource;
    rlo = Math.min(rlo, nlo);
    rhi = Math.max(rhi, nhi);
  }
  return { low: Math.exp(-rhi), high: Math.exp(-rlo), n: b.n, source };
}

function uncalibratedFactors(model: ResidualModel, family: IntervalFamily, regime: LoadRegime, level: number, unseen: readonly Dimension[]): IntervalFactors | undefined {
  let best: IntervalFactors | undefined;
  for (const { groups, source } of residualsFor(model, family, regime, unseen)) {
    if (count(groups) < 2) continue;
    const low = Math.exp(-weightedQuantile(groups, (1 + level) / 2, model.weightPower));
    const high = Math.exp(-weightedQuantile(groups, (1 - level) / 2, model.weightPower));
    if (!best) best = { low, high, n: count(groups), source };
    else best = { low: Math.min(best.low, low), high: Math.max(best.high, high), n: best.n, source: low < best.low || high > best.high ? source : best.source };
  }
  return best;
}

/** A FitPoint's regime: low (one at a time, ≤ 4 streams, a sweep's lowest rate), saturated (bursts, ≥ 64 streams), else loaded. */
export function pointRegime(p: Pick<FitPoint, 'family' | 'load'>, rowIsLowLoad: boolean): LoadRegime {
  if (p.family === 'ttft-low' || rowIsLowLoad) return 'low';
  if (p.family === 'out-sat') return 'saturated';
  const load = p.load ?? '';
  if (load === 'sync') return 'low';
  if (load === 'burst') return 'saturated';
  const closed = /^closed@(\d+)/.exec(load);
  if (closed) {
    const n = Number(closed[1]);
    if (n <= 4) return 'low';
    if (n >= 64) return 'saturated';
  }
  return 'loaded';
}

/** A model's family, by the leading letters of its catalog name: Llama-3.1-8B → llama, Qwen2.5-7B → qwen. */
export function modelFamily(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1).toLowerCase();
  return /^[a-z]+/.exec(base)?.[0] ?? base;
}

/** 16-bit weights are one quantization however the table spells them. */
export function quantClass(q: string | undefined): string {
  return q === undefined || q === 'none' || q === 'fp16' || q === 'bf16' ? '16-bit' : q;
}
