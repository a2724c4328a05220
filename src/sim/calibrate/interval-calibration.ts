/**
 * Calibrating the prediction intervals by leave-one-table-out, and measuring their coverage honestly.
 *
 * Scores (cross-conformal): each table's figures are set against the base interval built from the other tables'
 * residuals (intervals.ts baseInterval); a figure's score is how many times the base half-width on its side of the
 * median it needed to be inside (0 at the median, 1 at the base interval's end). The interval at level L is the base
 * one scaled by the L-quantile of the scores, so by construction it would have held L of the held-out figures.
 *
 * Coverage must not be read from those same scores (that is the in-sample figure, L by construction): `coverage`
 * with method 'calibrated' is nested. For each table left out, the scores are recomputed from the remaining tables
 * alone (their own leave-one-table-out), the interval built from them, and only then the left-out table's figures
 * are checked against it.
 */
import {
  BASE_LEVEL, baseInterval, buildResidualModel, FAMILIES, intervalFactors, type IntervalFamily, novelDimensions, quantile, type ResidualModel,
  type ResidualPoint, SCORE_WEIGHT_POWER, TABLE_WEIGHT_POWER,
} from './intervals.js';

/** How the quantiles weigh tables (intervals.ts TABLE_WEIGHT_POWER, SCORE_WEIGHT_POWER); the defaults are those shipped. */
export interface CalibrationOptions {
  weightPower?: number;
  baseLevel?: number;
  scorePower?: number;
  /**
   * Which scores are kept per family (where it has enough of them), the rest pooled over families: 'novel' (shipped:
   * the out-of-family scores per family, one in-family set over every family), 'none' (both pooled), 'all' (both per
   * family). Compared in docs/accuracy.md: a family has figures from 4–11 tables, and an in-family widening read from
   * so few swings with which table is left out.
   */
  familyScores?: FamilyScores;
}
export const FAMILY_SCORES = ['novel', 'none', 'all'] as const;
export type FamilyScores = (typeof FAMILY_SCORES)[number];

interface Scored { group: string; family: IntervalFamily; novel: boolean; s: number; sNovel: number }

/** A family's own in-family (out-of-family) scores need this many figures, else the pooled ones answer. */
export const MIN_FAMILY_SCORES = 30;
export const MIN_NOVEL_SCORES = 15;

/** How many times the base half-width on r's side of c the interval must be to hold r. */
function score(r: number, c: number, lo: number, hi: number): number {
  // A base interval of zero width on one side (all residuals alike) needs a large factor for anything off it.
  return r >= c ? (r - c) / Math.max(hi - c, 1e-4) : (c - r) / Math.max(c - lo, 1e-4);
}

/** Leave-one-table-out scores of every figure that the other tables give an interval for. */
export function lotoScores(points: readonly ResidualPoint[], weightPower = TABLE_WEIGHT_POWER, baseLevel = BASE_LEVEL): Scored[] {
  const nov = novelDimensions(points);
  const out: Scored[] = [];
  for (const g of [...new Set(points.map((p) => p.group))].sort()) {
    const rest = buildResidualModel(points.filter((p) => p.group !== g), weightPower, baseLevel);
    for (const p of points) {
      if (p.group !== g) continue;
      const dims = nov.get(p) ?? [];
      const b = baseInterval(rest, p.family, p.regime, dims);
      if (!b) continue;
      out.push({ group: g, family: p.family, novel: dims.length > 0, s: score(p.r, b.c, b.lo, b.hi), sNovel: score(p.r, b.c, b.elo, b.ehi) });
    }
  }
  return out;
}

const sortedUp = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);

/** Scores grouped by table (tables in name order, each ascending). */
function byTable(xs: readonly Scored[], value: (x: Scored) => number): number[][] {
  const m = new Map<string, number[]>();
  for (const x of xs) m.set(x.group, [...(m.get(x.group) ?? []), value(x)]);
  return [...m.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, v]) => sortedUp(v));
}

/** The scores a model is calibrated with (see ResidualModel.scores for the keys). */
export function scoreTable(scored: readonly Scored[], opts: CalibrationOptions = {}): Record<string, number[][]> {
  const out: Record<string, number[][]> = {};
  const inFamily = scored.filter((x) => !x.novel);
  const novel = scored.filter((x) => x.novel);
  if (inFamily.length) out['all'] = byTable(inFamily, (x) => x.s);
  if (novel.length) out['novel'] = byTable(novel, (x) => x.sNovel);
  const per = opts.familyScores ?? 'novel';
  for (const f of FAMILIES) {
    const own = inFamily.filter((x) => x.family === f);
    if (per === 'all' && own.length >= MIN_FAMILY_SCORES) out[f] = byTable(own, (x) => x.s);
    const nv = novel.filter((x) => x.family === f);
    if (per !== 'none' && nv.length >= MIN_NOVEL_SCORES) out[`${f}|novel`] = byTable(nv, (x) => x.sNovel);
  }
  return out;
}

/** The residual model of `points`, calibrated by their leave-one-table-out scores. */
export function calibratedModel(points: readonly ResidualPoint[], opts: CalibrationOptions = {}): ResidualModel {
  const weightPower = opts.weightPower ?? TABLE_WEIGHT_POWER;
  const baseLevel = opts.baseLevel ?? BASE_LEVEL;
  return {
    ...buildResidualModel(points, weightPower, baseLevel), scorePower: opts.scorePower ?? SCORE_WEIGHT_POWER,
    scores: scoreTable(lotoScores(points, weightPower, baseLevel), opts),
  };
}

/** How intervals are built for the coverage check: the pooled quantiles (before calibration), or calibrated (nested). */
export type IntervalMethod = 'pooled' | 'calibrated';

/** Leave-one-table-out coverage of the intervals at `level`, per family: in-family, and out-of-family (novel figures). */
export interface CoverageRow {
  family: IntervalFamily;
  /** Figures with an interval built without their table (those the coverage is of). */
  n: number;
  /** The family's figures in all, and the tables they come from (a family of one table cannot be judged). */
  figures: number;
  tables: number;
  /** Percent of held-out figures inside an interval built without their table (null when n is 0: not judged). */
  coverage: number | null;
  /** Median interval width, high − low, in percent of the prediction (null when n is 0). */
  medianWidthPct: number | null;
  /** Median |predicted/published − 1|, percent. */
  medianErrorPct: number;
  novel?: { n: number; coverage: number | null; medianWidthPct: number | null };
}

const median = (xs: number[]): number => quantile(sortedUp(xs), 0.5);

/**
 * Each table's figures against an interval built without it: from the other tables' pooled residuals ('pooled', the
 * method before calibration), or calibrated on the other tables alone ('calibrated': nested, see the file's head).
 */
export function coverage(points: readonly ResidualPoint[], level: number, method: IntervalMethod = 'calibrated', opts: CalibrationOptions = {}): CoverageRow[] {
  const nov = novelDimensions(points);
  const byFamily = new Map<IntervalFamily, { hit: boolean; width: number; novel: boolean }[]>();
  for (const g of [...new Set(points.map((p) => p.group))].sort()) {
    const others = points.filter((p) => p.group !== g);
    const rest = method === 'pooled' ? buildResidualModel(others, 0) : calibratedModel(others, opts);
    for (const p of points) {
      if (p.group !== g) continue;
      const dims = nov.get(p) ?? [];
      const f = intervalFactors(rest, p.family, p.regime, level, dims);
      if (!f) continue;
      const truthOverPred = Math.exp(-p.r);
      const list = byFamily.get(p.family) ?? [];
      list.push({ hit: truthOverPred >= f.low && truthOverPred <= f.high, width: (f.high - f.low) * 100, novel: dims.length > 0 });
      byFamily.set(p.family, list);
    }
  }
  return FAMILIES.filter((f) => points.some((p) => p.family === f)).map((family) => {
    const xs = byFamily.get(family) ?? [];
    const own = points.filter((p) => p.family === family);
    const nv = xs.filter((x) => x.novel);
    const pct = (ys: typeof xs): number | null => (ys.length ? (100 * ys.filter((y) => y.hit).length) / ys.length : null);
    return {
      family, n: xs.length, figures: own.length, tables: new Set(own.map((p) => p.group)).size,
      coverage: pct(xs), medianWidthPct: xs.length ? median(xs.map((x) => x.width)) : null,
      medianErrorPct: median(own.map((p) => Math.abs(Math.exp(p.r) - 1) * 100)),
      ...(nv.length ? { novel: { n: nv.length, coverage: pct(nv), medianWidthPct: median(nv.map((x) => x.width)) } } : {}),
    };
  });
}

/** `| family | figures | median error | 80% width | coverage | out-of-family … |` (markdown, for fit.ts and docs). */
export function coverageTable(rows: readonly CoverageRow[], level: number): string[] {
  const L = Math.round(level * 100);
  const f1 = (x: number | null | undefined): string => (x === undefined || x === null || !Number.isFinite(x) ? '—' : `${x.toFixed(1)}%`);
  return [
    `| family | figures (tables) | median error | median ${L}% width | ${L}% coverage | out-of-family figures | their ${L}% width | their coverage |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.family} | ${r.n === r.figures ? r.n : `${r.n} of ${r.figures}`} (${r.tables}) | ${f1(r.medianErrorPct)} | ${f1(r.medianWidthPct)} | ${f1(r.coverage)} | ${r.novel?.n ?? 0} | ${f1(r.novel?.medianWidthPct)} | ${f1(r.novel?.coverage)} |`),
  ];
}

/** What interval-data.ts holds. */
export interface IntervalData {
  /** Where the residuals come from. */
  source: string;
  /** The residuals, one array per table, and their leave-one-table-out scores (the intervals predict and plan print). */
  model: ResidualModel;
  /** Nested leave-one-table-out coverage of the calibrated 80% intervals (docs/accuracy.md prints it). */
  coverage80: CoverageRow[];
  /** The same check of the pooled quantiles without calibration (the method before), for comparison. */
  coverage80Pooled: CoverageRow[];
}

/** One calibration method tried by `methodGrid`, with its nested coverage on each residual set. */
export interface GridVariant {
  options: Required<CalibrationOptions>;
  /** Per residual set, each family's nested coverage (families without a held-out figure are left out). */
  coverage: Array<Record<string, number>>;
  /** Per residual set, the largest |coverage − level| over its families, in points. */
  distance: number[];
  /** The largest of `distance`: how the variants are ranked (smallest first). */
  worst: number;
}

/**
 * The method-selection rule of docs/accuracy.md: every combination of the options is scored by its nested
 * leave-one-table-out coverage at `level` on each residual set (e.g. the no-refit and the refitting runs), and ranked
 * by the worst family's distance from the level over all sets. Slow by design (each variant is a full nested
 * coverage: ~1.5 s per set on the 1,537 published figures).
 */
export function methodGrid(
  sets: ReadonlyArray<readonly ResidualPoint[]>, level: number,
  grid: { weightPower: readonly number[]; scorePower: readonly number[]; familyScores: readonly FamilyScores[]; baseLevel: readonly number[] },
  onVariant?: (v: GridVariant) => void,
): GridVariant[] {
  const out: GridVariant[] = [];
  for (const weightPower of grid.weightPower) for (const scorePower of grid.scorePower) for (const familyScores of grid.familyScores) for (const baseLevel of grid.baseLevel) {
    const options = { weightPower, scorePower, familyScores, baseLevel };
    const cov = sets.map((rp) => Object.fromEntries(coverage(rp, level, 'calibrated', options).filter((r) => r.coverage !== null).map((r) => [r.family, r.coverage as number])));
    const distance = cov.map((c) => Math.max(0, ...Object.values(c).map((x) => Math.abs(x - level * 100))));
    const v = { options, coverage: cov, distance, worst: Math.max(...distance) };
    out.push(v);
    onVariant?.(v);
  }
  return out.sort((a, b) => a.worst - b.worst);
}
