import type { Slo, StageSummary } from '../metrics/summary.js';
import type { StoredRun } from '../store/run-store.js';
import { missingPriceLines, priceBasis, pricesGiven, runPrice, unpricedCell, type PriceOptions } from './gpu-prices.js';
import { commonConcurrency, loadRows, risesWithLoad, rowAtStreams } from './matched-load.js';
import { saturationOf } from './saturation.js';
import { interpolatedNoise, judge, meanNoise, noiseText, throughputNoise, weighsNoise, type Noisy } from './verdict-noise.js';
import type { Table } from './table.js';

export interface Point {
  x: number;
  y: number;
}

/** Linear interpolation between the two rows around x (rows sorted by x); undefined outside the measured range. */
export function interpolateAt(points: readonly Point[], x: number): number | undefined {
  const ps = points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y)).sort((a, b) => a.x - b.x);
  for (let i = 0; i < ps.length; i++) {
    const a = ps[i] as Point;
    if (a.x === x) return a.y;
    const b = ps[i + 1];
    if (b && a.x < x && x <= b.x) return b.x === a.x ? b.y : a.y + ((b.y - a.y) * (x - a.x)) / (b.x - a.x);
  }
  return undefined;
}

/** As interpolateAt over rows, also naming the two rows read and where x lies between them (t in [0, 1]). */
function bracketAt(rows: readonly StageSummary[], pick: (s: StageSummary) => number | undefined, x: number): { value: number; a: StageSummary; b: StageSummary; t: number } | undefined {
  const ps = rows.filter((s) => Number.isFinite(s.requestThroughput) && Number.isFinite(pick(s) ?? Number.NaN)).sort((p, q) => p.requestThroughput - q.requestThroughput);
  for (let i = 0; i < ps.length; i++) {
    const a = ps[i] as StageSummary;
    if (a.requestThroughput === x) return { value: pick(a) as number, a, b: a, t: 0 };
    const b = ps[i + 1];
    if (b && a.requestThroughput < x && x <= b.requestThroughput) {
      const t = b.requestThroughput === a.requestThroughput ? 1 : (x - a.requestThroughput) / (b.requestThroughput - a.requestThroughput);
      return { value: (pick(a) as number) + ((pick(b) as number) - (pick(a) as number)) * t, a, b, t };
    }
  }
  return undefined;
}

/** A latency mean read at the common rate, with its noise from the two rows it was read between. */
function latencyAt(run: StoredRun, metric: 'ttftMs' | 'itlMs', repeatKey: string, x: number): Noisy | undefined {
  const hit = bracketAt(loadRows(run), (s) => s.metrics[metric]?.mean, x);
  if (!hit) return undefined;
  const measured = weighsNoise(run);
  return interpolatedNoise(hit.value, meanNoise(hit.a, metric, repeatKey, measured), meanNoise(hit.b, metric, repeatKey, measured), hit.t);
}

/** Rows with completions inside their window: an overloaded row still tells the ceiling (peak tokens/s). */
const measuredRows = (run: StoredRun): StageSummary[] => run.summary.stages.filter((s) => s.requests.ok > 0 && s.requestThroughput > 0);

const sameSlo = (a: Slo, b: Slo): boolean => a.ttftMs === b.ttftMs && a.itlMs === b.itlMs && a.e2eMs === b.e2eMs;

/** The percentile a share of requests within a limit is read at: 90% → p90; above 95% → p99. */
const percentileFor = (attainment: number): 'median' | 'p90' | 'p95' | 'p99' => (attainment <= 50 ? 'median' : attainment <= 90 ? 'p90' : attainment <= 95 ? 'p95' : 'p99');

/**
 * A row meets the SLO when nothing failed and every given limit that was measured holds at p99 — or, with an
 * attainment (a capacity run's `--slo-attainment 90`), when that share of its requests met every limit: the row's
 * own count where it was made against the same limits, else each limit at the matching percentile (p90). A figure
 * the row could not measure (no ITL for one-token replies, no TTFT without streaming) neither passes nor fails; a
 * row with no measured limit at all does not meet the SLO.
 */
export function meetsSlo(s: StageSummary, slo: Slo, attainment?: number): boolean {
  if (s.requests.errors !== 0) return false;
  if (attainment !== undefined && s.sloAttainment && s.goodput && sameSlo(s.goodput.slo, slo)) return s.sloAttainment.percent >= attainment;
  const at = attainment === undefined ? 'p99' : percentileFor(attainment);
  let measured = 0;
  for (const [limit, value] of [
    [slo.ttftMs, s.metrics.ttftMs?.[at]],
    [slo.itlMs, s.metrics.itlMs?.[at]],
    [slo.e2eMs, s.metrics.e2eMs?.[at]],
  ] as const) {
    if (limit === undefined || value === undefined || !Number.isFinite(value)) continue;
    if (value > limit) return false;
    measured++;
  }
  return measured > 0;
}

/**
 * The SLO as it was given: "TTFT p99 ≤ 600 ms" (compare's rule: every request but 1%), or with an attainment
 * "90% of requests TTFT ≤ 600 ms" (a capacity run's `--slo ttft:600 --slo-attainment 90`).
 */
export function sloText(slo: Slo, attainment?: number): string {
  const limits: [string, number | undefined][] = [
    ['TTFT', slo.ttftMs],
    ['ITL', slo.itlMs],
    ['E2E', slo.e2eMs],
  ];
  const given = limits.filter((l): l is [string, number] => l[1] !== undefined);
  if (attainment !== undefined) return `${+attainment.toFixed(2)}% of requests ${given.map(([n, v]) => `${n} ≤ ${v} ms`).join(' and ')}`;
  return given.map(([n, v]) => `${n} p99 ≤ ${v} ms`).join(', ');
}

/**
 * The attainment the verdict's SLO holds at: the one given, else the one every run's capacity search used when
 * they all searched against these limits (a matrix of capacity cells), else none (the p99 rule).
 */
export function sloAttainmentOf(runs: readonly StoredRun[], opts: VerdictOptions): number | undefined {
  if (!opts.slo) return undefined;
  if (opts.sloAttainment !== undefined) return opts.sloAttainment;
  const caps = runs.map((r) => r.summary.capacity);
  const first = caps[0];
  if (!first || !caps.every((c) => c && sameSlo(c.slo, opts.slo as Slo) && c.attainment === first.attainment)) return undefined;
  return first.attainment;
}

/** USD per 1M output tokens when every GPU of the run is billed for the whole hour. */
export function costPerMillion(pricePerGpuHour: number, gpus: number, outputTokensPerS: number): number | undefined {
  return outputTokensPerS > 0 ? (pricePerGpuHour * gpus * 1e6) / (outputTokensPerS * 3600) : undefined;
}

export interface VerdictOptions extends PriceOptions {
  slo?: Slo;
  /** Percent of a row's requests that must meet the SLO's limits (absent: the p99 rule, or the runs' capacity searches'). */
  sloAttainment?: number;
  /** How the runs differ where they should not (compare --allow-mismatch): printed as a WARNING first. */
  mismatches?: string[];
}

/** Where a run's cost was read: the highest load meeting the SLO, its saturation, or (never saturated) its peak. */
export type CostBasis = 'slo' | 'saturation' | 'peak';

export interface RunVerdict {
  series: string;
  /** The highest output rate over the run's rows. A capacity only when `saturated`. */
  peak?: { tokensPerS: number; row: string };
  saturated?: boolean;
  /** Why the run counts as saturated, or why it cannot be told (saturation.ts). */
  saturationEvidence?: string;
  /** The peak, present only when the run saturated. */
  saturation?: { tokensPerS: number; row: string };
  sloRate?: { requestsPerS: number; row: string } | null;
  ttftAtCommon?: number;
  itlAtCommon?: number;
  /** The figures above with their 95% half-widths, to tell a lead from a tie or noise (verdict-noise.ts). */
  peakNoise?: Noisy;
  ttftNoise?: Noisy;
  itlNoise?: Noisy;
  costPerMillion?: number;
  /** USD per GPU-hour the cost was computed at (with per-GPU prices, this run's GPU's). */
  gpuHourPrice?: number;
  costAt?: { basis: CostBasis; row: string };
  /** GPU joules per 1M output tokens on the same row as the cost (the row's measured energy, `--power`), when valid. */
  joulesPerMillion?: number;
}

export type VerdictFigures = { run: string } & Record<string, number | string | boolean | null>;

export interface Verdict {
  /** The highest achieved request rate every run reached (sweeps). */
  commonRate?: number;
  /** Closed loops: the highest concurrency every run measured, where their rows are matched directly. */
  commonConcurrency?: number;
  /** The SLO as it was given (sloText), when there is one. */
  sloText?: string;
  runs: RunVerdict[];
  /**
   * compare.json `verdict.figures`: the verdict's numbers, one object per run, each field named with its unit
   * (`…PerS`, `…Ms`, `…Usd…`); null where the figure does not exist (no row met the SLO, no price given).
   */
  figures: VerdictFigures[];
  table: Table;
  /** The short verdict, one sentence a line. */
  lines: string[];
}

const f = (n: number | undefined, d = 2): string => (n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(d));
const pct = (a: number, b: number): string => `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(1)}%`;
const highest = (rows: readonly StageSummary[], by: (s: StageSummary) => number): StageSummary | undefined =>
  rows.reduce<StageSummary | undefined>((b, s) => (!b || by(s) > by(b) ? s : b), undefined);

/** The warning line for runs compared although they differ (empty when they do not). */
export function mismatchWarning(opts: VerdictOptions): string[] {
  const m = opts.mismatches ?? [];
  return m.length ? [`WARNING: these runs differ in ${m.join('; ')} — the figures below do not compare like with like.`] : [];
}

export function computeVerdict(runs: readonly StoredRun[], names: readonly string[], opts: VerdictOptions): Verdict {
  const attainment = sloAttainmentOf(runs, opts);
  // Closed loops match row for row at a concurrency every run measured; other runs are read at a common req/s.
  const streams = commonConcurrency(runs);
  const maxes = runs.map((r) => Math.max(...loadRows(r).map((s) => s.requestThroughput)));
  const mins = runs.map((r) => Math.min(...loadRows(r).map((s) => s.requestThroughput)));
  const top = Math.min(...maxes);
  const commonRate = streams === undefined && Number.isFinite(top) && top >= Math.max(...mins) ? top : undefined;
  // A run whose req/s does not rise with its load has no curve to read at a rate (matched-load.ts).
  const unread = new Set(commonRate !== undefined ? runs.flatMap((r, i) => (risesWithLoad(loadRows(r)) ? [] : [i])) : []);

  const verdicts: RunVerdict[] = runs.map((run, i) => {
    const v: RunVerdict = { series: names[i] ?? run.id };
    const best = highest(measuredRows(run), (s) => s.outputTokenThroughput);
    const sat = saturationOf(run.summary.stages);
    if (best) {
      v.peak = { tokensPerS: best.outputTokenThroughput, row: best.label };
      v.peakNoise = throughputNoise(best, best.outputTokenThroughput, 'outputTokenThroughput', weighsNoise(run));
      v.saturated = sat.saturated;
      v.saturationEvidence = sat.why;
      if (sat.saturated) v.saturation = { ...v.peak };
    }
    let sloRow: StageSummary | undefined;
    if (opts.slo) {
      sloRow = highest(loadRows(run).filter((s) => meetsSlo(s, opts.slo as Slo, attainment)), (s) => s.requestThroughput);
      v.sloRate = sloRow ? { requestsPerS: sloRow.requestThroughput, row: sloRow.label } : null;
    }
    const matched = streams !== undefined ? rowAtStreams(run, streams) : undefined;
    if (matched) {
      const measured = weighsNoise(run);
      const tn = meanNoise(matched, 'ttftMs', 'ttftMean', measured);
      const ln = meanNoise(matched, 'itlMs', 'itlMean', measured);
      if (tn) [v.ttftAtCommon, v.ttftNoise] = [tn.value, tn];
      if (ln) [v.itlAtCommon, v.itlNoise] = [ln.value, ln];
    }
    if (commonRate !== undefined && !unread.has(i)) {
      const pts = (pick: (s: StageSummary) => number | undefined): Point[] =>
        loadRows(run).map((s) => ({ x: s.requestThroughput, y: pick(s) ?? Number.NaN }));
      const ttft = interpolateAt(pts((s) => s.metrics.ttftMs?.mean), commonRate);
      const itl = interpolateAt(pts((s) => s.metrics.itlMs?.mean), commonRate);
      if (ttft !== undefined) v.ttftAtCommon = ttft;
      if (itl !== undefined) v.itlAtCommon = itl;
      const tn = latencyAt(run, 'ttftMs', 'ttftMean', commonRate);
      const ln = latencyAt(run, 'itlMs', 'itlMean', commonRate);
      if (tn) v.ttftNoise = tn;
      if (ln) v.itlNoise = ln;
    }
    // With an SLO the price that matters is at the load the server can serve within it, not flat out.
    const costRow = opts.slo ? sloRow : best;
    const price = runPrice(run, opts).price;
    const jPerToken = costRow?.energy?.valid ? costRow.energy.joulesPerOutputToken : undefined;
    if (jPerToken !== undefined) v.joulesPerMillion = jPerToken * 1e6;
    if (price !== undefined && costRow) {
      const c = costPerMillion(price, run.summary.context.gpus ?? 1, costRow.outputTokenThroughput);
      if (c !== undefined) {
        v.costPerMillion = c;
        v.gpuHourPrice = price;
        v.costAt = { basis: opts.slo ? 'slo' : sat.saturated ? 'saturation' : 'peak', row: costRow.label };
      }
    }
    return v;
  });

  const allSaturated = verdicts.every((v) => v.peak === undefined || v.saturated);
  const at = streams !== undefined ? ` @ concurrency ${streams}` : commonRate !== undefined ? ` @ ${f(commonRate)} req/s` : ' (no common load)';
  const headers = ['Run', allSaturated ? 'Output tok/s at saturation' : 'Peak output tok/s (saturated?)', `TTFT mean${at}`, `ITL mean${at}`];
  if (opts.slo) headers.splice(1, 0, `Highest req/s meeting SLO`);
  if (pricesGiven(opts)) {
    const where = opts.slo ? 'at the highest load meeting the SLO' : allSaturated ? 'at saturation' : 'at peak load';
    headers.push(`$ per 1M output tokens ${where} (${priceBasis(runs, opts)})`);
  }
  const withEnergy = verdicts.some((v) => v.joulesPerMillion !== undefined);
  if (withEnergy) headers.push(`J per 1M output tokens ${opts.slo ? 'at the highest load meeting the SLO' : allSaturated ? 'at saturation' : 'at peak load'} (GPU energy, --power)`);
  const rows = verdicts.map((v, i) => {
    const run = runs[i] as StoredRun;
    const peak = v.peak ? `${f(v.peak.tokensPerS)} (${v.peak.row}${allSaturated ? '' : v.saturated ? ', saturated' : ', not saturated'})` : 'no request completed';
    const row = [v.series, peak, `${f(v.ttftAtCommon)} ms`, `${f(v.itlAtCommon)} ms`];
    if (opts.slo) row.splice(1, 0, v.sloRate ? `${f(v.sloRate.requestsPerS)} (${v.sloRate.row})` : 'none');
    if (pricesGiven(opts)) row.push(costCell(v, run, opts));
    if (withEnergy) row.push(v.joulesPerMillion !== undefined ? `${f(v.joulesPerMillion / 1e6, 3)} MJ (${f(v.joulesPerMillion / 3.6e6, 3)} kWh)` : '— (no valid energy)');
    return row;
  });
  const where: MatchedLoad | undefined =
    streams !== undefined
      ? { first: `At concurrency ${streams} (the highest every run measured, rows matched directly)`, again: `At concurrency ${streams}` }
      : commonRate !== undefined
        ? { first: `At ${f(commonRate)} req/s (the highest rate every run reached)`, again: `At ${f(commonRate)} req/s` }
        : undefined;
  const unreadNames = [...unread].map((i) => names[i] ?? runs[i]?.id);
  const one = unreadNames.length === 1;
  const unreadLine = unreadNames.length
    ? [`${unreadNames.join(', ')}: req/s does not rise with ${one ? 'its' : 'their'} load (added streams only queued), so ${one ? 'its' : 'their'} rows are not read at ${f(commonRate)} req/s — compare rows of the same concurrency or rate.`]
    : [];
  const sloSaid = opts.slo ? sloText(opts.slo, attainment) : undefined;
  const lines = [...mismatchWarning(opts), ...verdictLines(verdicts, where, opts, sloSaid), ...unreadLine, ...missingPriceLines(runs, names, opts)];
  const figures = verdicts.map((v, i): VerdictFigures => ({
    run: v.series,
    peakOutputTokensPerS: v.peak?.tokensPerS ?? null,
    peakRow: v.peak?.row ?? null,
    saturated: v.saturated ?? null,
    saturationOutputTokensPerS: v.saturation?.tokensPerS ?? null,
    ...(opts.slo ? { sloHighestRequestsPerS: v.sloRate?.requestsPerS ?? null, sloHighestRow: v.sloRate?.row ?? null } : {}),
    commonRateRequestsPerS: commonRate ?? null,
    ttftMeanMsAtCommonRate: commonRate !== undefined ? (v.ttftAtCommon ?? null) : null,
    itlMeanMsAtCommonRate: commonRate !== undefined ? (v.itlAtCommon ?? null) : null,
    matchedConcurrency: streams ?? null,
    ttftMeanMsAtMatchedConcurrency: streams !== undefined ? (v.ttftAtCommon ?? null) : null,
    itlMeanMsAtMatchedConcurrency: streams !== undefined ? (v.itlAtCommon ?? null) : null,
    gpus: runs[i]?.summary.context.gpus ?? 1,
    gpuHourPriceUsd: v.gpuHourPrice ?? null,
    costUsdPerMillionOutputTokens: v.costPerMillion ?? null,
    costBasis: v.costAt?.basis ?? null,
    costRow: v.costAt?.row ?? null,
    joulesPerMillionOutputTokens: v.joulesPerMillion ?? null,
  }));
  return {
    ...(commonRate !== undefined ? { commonRate } : {}),
    ...(streams !== undefined ? { commonConcurrency: streams } : {}),
    ...(sloSaid !== undefined ? { sloText: sloSaid } : {}),
    runs: verdicts,
    figures,
    table: { headers, rows },
    lines,
  };
}

function costCell(v: RunVerdict, run: StoredRun, opts: VerdictOptions): string {
  const price = runPrice(run, opts);
  if (price.price === undefined) return unpricedCell(price);
  if (v.costPerMillion === undefined) return opts.slo && v.sloRate === null ? '— (no row met the SLO)' : '—';
  const note = v.costAt?.basis === 'peak' ? ', not saturated: an upper bound' : '';
  return `$${f(v.costPerMillion, 3)} (${gpuCount(run, opts)}${opts.slo ? `, ${v.costAt?.row}` : ''}${note})`;
}

/** "2 GPU", and with per-GPU prices the run's own price: "2 GPU at $2.49/GPU-hour". */
export function gpuCount(run: StoredRun, opts: PriceOptions): string {
  const gpus = `${run.summary.context.gpus ?? 1} GPU`;
  const price = runPrice(run, opts).price;
  return opts.gpuHourPrices !== undefined && price !== undefined ? `${gpus} at $${price.toFixed(2)}/GPU-hour` : gpus;
}

function leader<T>(items: readonly T[], score: (t: T) => number | undefined, higherIsBetter: boolean): [T, T] | undefined {
  const scored = items.filter((t) => Number.isFinite(score(t) ?? Number.NaN)).sort((a, b) => ((score(b) as number) - (score(a) as number)) * (higherIsBetter ? 1 : -1));
  return scored.length >= 2 ? [scored[0] as T, scored[1] as T] : undefined;
}

/** A figure without noise to weigh (compared for ties only). */
const exact = (value: number): Noisy => ({ value, halfWidth95: 0, source: 'none' });

/** "lowest TTFT A (59.40 ms vs 61.02 ms)", a tie, or no clear leader within noise. */
function latencyLine(where: string, name: string, pair: [RunVerdict, RunVerdict], value: (v: RunVerdict) => number | undefined, noise: (v: RunVerdict) => Noisy | undefined): string {
  const [a, b] = pair;
  const va = value(a) as number;
  const vb = value(b) as number;
  const j = judge(noise(a) ?? exact(va), noise(b) ?? exact(vb));
  if (j.kind === 'tie') return `${where}: ${name} a tie — ${a.series} and ${b.series} both ${f(va)} ms.`;
  if (j.kind === 'noise') return `${where}: ${name} no clear leader — ${a.series} ${f(va)} ms vs ${b.series} ${f(vb)} ms, ${noiseText(j, va)}.`;
  return `${where}: lowest ${name} ${a.series} (${f(va)} ms vs ${f(vb)} ms).`;
}

/** Where the latency lines read their figures: the sentence opening the first line, and the later ones. */
interface MatchedLoad {
  first: string;
  again: string;
}

function verdictLines(vs: readonly RunVerdict[], where: MatchedLoad | undefined, opts: VerdictOptions, slo: string | undefined): string[] {
  const lines: string[] = [];
  const top = leader(vs, (v) => v.peak?.tokensPerS, true);
  if (top) {
    const [a, b] = top;
    const ta = a.peak?.tokensPerS as number;
    const tb = b.peak?.tokensPerS as number;
    const j = judge(a.peakNoise ?? exact(ta), b.peakNoise ?? exact(tb));
    if (a.saturated && b.saturated) {
      if (j.kind === 'tie') lines.push(`Output tokens/s at saturation: a tie — ${a.series} and ${b.series} both ${f(ta)} tok/s.`);
      else if (j.kind === 'noise') lines.push(`Output tokens/s at saturation: no clear leader — ${a.series} ${f(ta)} tok/s vs ${b.series} ${f(tb)} (${pct(ta, tb)}), ${noiseText(j, ta)}.`);
      else lines.push(`Most output tokens/s at saturation: ${a.series} — ${f(ta)} tok/s, ${pct(ta, tb)} over ${b.series}.`);
    } else if (j.kind !== 'lead') {
      const unsat = [a, b].filter((v) => !v.saturated);
      const who = unsat.length === 2 ? 'neither run saturated' : `${unsat[0]?.series} never saturated`;
      const gap = j.kind === 'tie' ? `a tie — ${a.series} and ${b.series} both ${f(ta)} tok/s` : `no clear leader — ${a.series} ${f(ta)} tok/s vs ${b.series} ${f(tb)} (${pct(ta, tb)}), ${noiseText(j, ta)}`;
      lines.push(`Highest output tokens/s measured: ${gap}. Not a capacity comparison: ${who}.`);
    } else {
      // A run that never saturated has an unknown ceiling: its peak is only what the tried loads drew out.
      const unsat = [a, b].filter((v) => !v.saturated);
      const who = unsat.length === 2 ? 'neither run saturated' : `${unsat[0]?.series} never saturated`;
      const whys = [...new Set(unsat.map((v) => v.saturationEvidence ?? 'no sign of a ceiling'))].join('; ');
      lines.push(
        `Highest output tokens/s measured: ${a.series} — ${f(ta)} tok/s (${a.peak?.row}), ${pct(ta, tb)} over ${b.series} (${b.peak?.row}). ` +
          `Not a capacity comparison: ${who} (${whys}); add a throughput row or higher rates to find the ceiling.`,
      );
    }
  }
  if (opts.slo) {
    const s = leader(vs, (v) => v.sloRate?.requestsPerS, true);
    const only = vs.filter((v) => v.sloRate);
    if (s && judge(exact(s[0].sloRate?.requestsPerS ?? 0), exact(s[1].sloRate?.requestsPerS ?? 0)).kind === 'tie') {
      lines.push(`Highest load within the SLO (${slo}): a tie — ${s[0].series} and ${s[1].series} both at ${f(s[0].sloRate?.requestsPerS)} req/s.`);
    } else if (s) lines.push(`Highest load within the SLO (${slo}): ${s[0].series} at ${f(s[0].sloRate?.requestsPerS)} req/s (next: ${s[1].series} at ${f(s[1].sloRate?.requestsPerS)}).`);
    else if (only.length === 1) lines.push(`Only ${only[0]?.series} meets the SLO (${slo}) at any measured rate: ${f(only[0]?.sloRate?.requestsPerS)} req/s.`);
    else if (only.length === 0) lines.push(`No run meets the SLO (${slo}) at any measured rate.`);
  }
  if (where) {
    const t = leader(vs, (v) => v.ttftAtCommon, false);
    const l = leader(vs, (v) => v.itlAtCommon, false);
    if (t) lines.push(latencyLine(where.first, 'TTFT', t, (v) => v.ttftAtCommon, (v) => v.ttftNoise));
    if (l) lines.push(latencyLine(where.again, 'ITL', l, (v) => v.itlAtCommon, (v) => v.itlNoise));
  }
  const c = leader(vs, (v) => v.costPerMillion, false);
  if (c && judge(exact(c[0].costPerMillion ?? 0), exact(c[1].costPerMillion ?? 0)).kind === 'tie') {
    lines.push(`Cost per output token: a tie — ${c[0].series} and ${c[1].series} both $${f(c[0].costPerMillion, 3)} per 1M.`);
  } else if (c) {
    const bases = new Set([c[0].costAt?.basis, c[1].costAt?.basis]);
    const where = bases.has('slo')
      ? 'at the highest load within the SLO'
      : bases.has('peak')
        ? 'at the highest measured load; a run that never saturated may cost less at more load'
        : 'at saturation';
    lines.push(`Cheapest per output token: ${c[0].series} at $${f(c[0].costPerMillion, 3)} per 1M (vs $${f(c[1].costPerMillion, 3)}), ${where}.`);
  }
  return lines;
}
