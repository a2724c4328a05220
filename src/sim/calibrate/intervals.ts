/**
 * Prediction intervals from held-out residuals. Every published figure left out by leave-one-table-out (fit.ts --loto)
 * gives one residual r = ln(predicted / published); an interval at level L around a new prediction p is
 * [p·e^(−q(1+L)/2), p·e^(−q(1−L)/2)], q the empirical quantiles of the residuals of its metric family and load regime.
 *
 * Distance from the data: a figure whose GPU, engine (version), model family or quantization no *other* table covers
 * was predicted with that dimension's constants back at their priors (leave-one-table-out refits only what the other
 * tables share), so its residual is an out-of-family residual. A prediction for a configuration that no published
 * table covers in some dimension takes the quantiles of the out-of-family residuals of that dimension (the widest,
 * when several dimensions are unseen).
 *
 * Coverage is checked by leave-one-table-out over the residuals: each table's figures against an interval built from
 * the other tables' residuals only (`coverage`).
 */
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

/** The residuals an interval is read from: sorted ascending. */
export interface ResidualModel {
  /** `${family}|${regime}` and `${family}` (pooled over regimes). */
  cells: Record<string, number[]>;
  /** `${family}|${dimension}` and `${family}|any`: residuals of figures novel in that dimension. */
  novel: Record<string, number[]>;
  /** Per dimension, the values the data covers and how many tables cover each. */
  seen: Record<Dimension, Record<string, number>>;
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

/** The residual model of a set of points (all tables, or all but one for the coverage check). */
export function buildResidualModel(points: readonly ResidualPoint[]): ResidualModel {
  const cells: Record<string, number[]> = {};
  const cellTables: Record<string, Set<string>> = {};
  const push = (rec: Record<string, number[]>, k: string, r: number): void => {
    (rec[k] ??= []).push(r);
  };
  for (const p of points) {
    for (const k of [`${p.family}|${p.regime}`, p.family]) {
      push(cells, k, p.r);
      (cellTables[k] ??= new Set()).add(p.group);
    }
  }
  // Cells too thin to stand alone are dropped: the family's pooled residuals answer for them.
  for (const k of Object.keys(cells)) {
    if (k.includes('|') && ((cells[k]?.length ?? 0) < MIN_CELL_POINTS || (cellTables[k]?.size ?? 0) < MIN_CELL_TABLES)) delete cells[k];
  }
  const novel: Record<string, number[]> = {};
  const nov = novelDimensions(points);
  for (const p of points) {
    const dims = nov.get(p) ?? [];
    for (const d of dims) push(novel, `${p.family}|${d}`, p.r);
    if (dims.length) push(novel, `${p.family}|any`, p.r);
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
  const sortAll = (rec: Record<string, number[]>): Record<string, number[]> =>
    Object.fromEntries(Object.entries(rec).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, sorted(v)]));
  return { cells: sortAll(cells), novel: sortAll(novel), seen };
}

/** What interval-data.ts holds. */
export interface IntervalData {
  /** Where the residuals come from. */
  source: string;
  model: ResidualModel;
  /** Leave-one-table-out coverage of the 80% intervals (docs/accuracy.md prints it). */
  coverage80: CoverageRow[];
}

/** A multiplicative interval: the true figure lies in [prediction × low, prediction × high] at `level`. */
export interface IntervalFactors {
  low: number;
  high: number;
  /** Residuals it was read from, and where from (`ttft|loaded`, `ttft|gpu` for out-of-family …). */
  n: number;
  source: string;
}

/** The residuals for a family and regime, widened to the out-of-family ones of the `unseen` dimensions. */
export function residualsFor(model: ResidualModel, family: IntervalFamily, regime: LoadRegime, unseen: readonly Dimension[] = []): Array<{ xs: number[]; source: string }> {
  const cell = model.cells[`${family}|${regime}`] ? `${family}|${regime}` : family;
  const out = [{ xs: model.cells[cell] ?? [], source: cell }];
  for (const d of unseen) {
    const k = (model.novel[`${family}|${d}`]?.length ?? 0) >= MIN_NOVEL_POINTS ? `${family}|${d}` : `${family}|any`;
    if (model.novel[k]?.length) out.push({ xs: model.novel[k] as number[], source: k });
  }
  return out;
}

/** Interval factors at `level` (0..1): the widest of the residual sets `residualsFor` gives. */
export function intervalFactors(model: ResidualModel, family: IntervalFamily, regime: LoadRegime, level: number, unseen: readonly Dimension[] = []): IntervalFactors | undefined {
  let best: IntervalFactors | undefined;
  for (const { xs, source } of residualsFor(model, family, regime, unseen)) {
    if (xs.length < 2) continue;
    // r = ln(pred/published): the truth is pred·e^(−r), so the high residual quantile gives the low end.
    const low = Math.exp(-quantile(xs, (1 + level) / 2));
    const high = Math.exp(-quantile(xs, (1 - level) / 2));
    if (!best) best = { low, high, n: xs.length, source };
    else best = { low: Math.min(best.low, low), high: Math.max(best.high, high), n: best.n, source: low < best.low || high > best.high ? source : best.source };
  }
  return best;
}

/** Leave-one-table-out coverage of the intervals at `level`, per family: in-family, and out-of-family (novel figures). */
export interface CoverageRow {
  family: IntervalFamily;
  n: number;
  /** Percent of held-out figures inside an interval built without their table. */
  coverage: number;
  /** Median interval width, high − low, in percent of the prediction. */
  medianWidthPct: number;
  /** Median |predicted/published − 1|, percent. */
  medianErrorPct: number;
  novel?: { n: number; coverage: number; medianWidthPct: number };
}

const median = (xs: number[]): number => quantile(sorted(xs), 0.5);

export function coverage(points: readonly ResidualPoint[], level: number): CoverageRow[] {
  const nov = novelDimensions(points);
  const byFamily = new Map<IntervalFamily, { hit: boolean; width: number; err: number; novel: boolean }[]>();
  for (const g of [...new Set(points.map((p) => p.group))]) {
    const rest = buildResidualModel(points.filter((p) => p.group !== g));
    for (const p of points.filter((q) => q.group === g)) {
      const dims = nov.get(p) ?? [];
      const f = intervalFactors(rest, p.family, p.regime, level, dims);
      if (!f) continue;
      const truthOverPred = Math.exp(-p.r);
      const list = byFamily.get(p.family) ?? [];
      list.push({ hit: truthOverPred >= f.low && truthOverPred <= f.high, width: (f.high - f.low) * 100, err: Math.abs(Math.exp(p.r) - 1) * 100, novel: dims.length > 0 });
      byFamily.set(p.family, list);
    }
  }
  return FAMILIES.filter((f) => byFamily.has(f)).map((family) => {
    const xs = byFamily.get(family) ?? [];
    const nv = xs.filter((x) => x.novel);
    const pct = (ys: typeof xs): number => (100 * ys.filter((y) => y.hit).length) / ys.length;
    return {
      family, n: xs.length, coverage: pct(xs), medianWidthPct: median(xs.map((x) => x.width)), medianErrorPct: median(xs.map((x) => x.err)),
      ...(nv.length ? { novel: { n: nv.length, coverage: pct(nv), medianWidthPct: median(nv.map((x) => x.width)) } } : {}),
    };
  });
}

/** `| family | figures | median error | 80% width | coverage | out-of-family … |` (markdown, for fit.ts and docs). */
export function coverageTable(rows: readonly CoverageRow[], level: number): string[] {
  const L = Math.round(level * 100);
  const f1 = (x: number): string => `${x.toFixed(1)}%`;
  return [
    `| family | figures | median error | median ${L}% width | ${L}% coverage | out-of-family figures | their ${L}% width | their coverage |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.family} | ${r.n} | ${f1(r.medianErrorPct)} | ${f1(r.medianWidthPct)} | ${f1(r.coverage)} | ${r.novel?.n ?? 0} | ${r.novel ? f1(r.novel.medianWidthPct) : '—'} | ${r.novel ? f1(r.novel.coverage) : '—'} |`),
  ];
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
