import type { CapacityResult } from '../load/capacity-types.js';
import { findHardware } from '../sim/catalog/registry.js';
import type { StoredRun } from '../store/run-store.js';
import { missingPriceLines, priceBasis, pricesGiven, runPrice, unpricedCell, type PriceOptions } from './gpu-prices.js';
import { capacityCell, capacityTerms, loadText, probeRow, sloLimitsText, type CapacityTerms } from './capacity-text.js';
import type { Table } from './table.js';

/**
 * `compare` of capacity runs: which deployment holds the most load within its SLO, per GPU and per dollar.
 *
 * Definitions (printed under the table):
 * - capacity: the run's `feasibleMax` — the highest load whose probes met the SLO (monotone fit), ± the search's precision;
 * - capacity per GPU: capacity ÷ the run's GPUs (`--gpus`; 1 when the run recorded its GPU but not their count, said
 *   so in the cell); none for a run on a CPU, or one that recorded no hardware at all (a llama.cpp server on a CPU
 *   records neither), and no such column when no run has one;
 * - requests per $: the requests served in one hour at capacity ÷ that hour's price of the run's GPUs
 *   (`--gpu-hour-price` × GPUs; with per-GPU prices, the price of the run's own GPU). On the rate axis the rate at capacity is the capacity itself; on the concurrency axis
 *   it is the achieved request rate of the passing probes at the capacity's stream count (their mean when repeated).
 */
export interface CapacityRankEntry {
  runId: string;
  series: string;
  engine: string;
  gpu: string | null;
  gpus: number;
  /** The run did not record its GPU count: per-GPU and per-$ figures count it as 1. */
  gpusAssumed: boolean;
  /** What the run ran on, as far as it recorded: GPUs, a CPU (`--gpu` named one), or nothing recorded. */
  hardware: 'gpu' | 'cpu' | 'unrecorded';
  axis: CapacityResult['axis'];
  unit: CapacityResult['unit'];
  feasibleMax: number | null;
  firstBreach: number | null;
  precision: number;
  /** Requests per second served at capacity (see above); null when not known. */
  requestsPerSAtCapacity: number | null;
  capacityPerGpu: number | null;
  /** USD per GPU-hour this run was priced at; null without prices or when its GPU has none. */
  gpuHourPrice: number | null;
  /** Only with --gpu-hour-price (or --prices), and only for a run with a price. */
  requestsPerDollar: number | null;
  /** 1 = most capacity; runs that never passed share the last rank. */
  rank: number;
  rankPerGpu: number | null;
  rankPerDollar: number | null;
}

export interface CapacityRanking {
  /** What the capacities were ordered by: the axis's own unit, or req/s at capacity when the runs' axes differ. */
  orderedBy: string;
  entries: CapacityRankEntry[];
  table: Table;
  lines: string[];
  /** The runs' common terms (SLO, attainment, error limit, axis); null for a term the runs differ in. */
  terms: { [K in keyof CapacityTerms]: string | null };
}

/** GPUs, a CPU (a catalogue CPU or a `cpu:…` spec as `--gpu`), or neither GPU nor count recorded. */
function hardwareKind(context: StoredRun['summary']['context']): CapacityRankEntry['hardware'] {
  if (context.gpu === undefined) return context.gpus === undefined ? 'unrecorded' : 'gpu';
  try {
    return findHardware(context.gpu).cpu !== undefined ? 'cpu' : 'gpu';
  } catch {
    return 'gpu';
  }
}

/** The hardware cell: `8× H100`, `1× A100-80GB (count not recorded: 1 assumed)`, `CPU EPYC-9654`, `not recorded`. */
function hardwareCell(e: CapacityRankEntry): string {
  if (e.hardware === 'cpu') return `CPU ${e.gpu}`;
  if (e.hardware === 'unrecorded') return 'not recorded';
  return `${e.gpus}× ${e.gpu ?? 'GPU'}${e.gpusAssumed ? ' (count not recorded: 1 assumed)' : ''}`;
}

/** Request rate at capacity: the capacity on the rate axis, the passing probes' achieved rate on the concurrency axis. */
function requestsPerSAtCapacity(run: StoredRun, c: CapacityResult): number | null {
  if (c.feasibleMax === null) return null;
  if (c.axis === 'rate') return c.feasibleMax;
  const rates = c.probes
    .filter((p) => p.load === c.feasibleMax && p.pass)
    .map((p) => probeRow(run.summary.stages, p)?.requestThroughput)
    .filter((r): r is number => r !== undefined && Number.isFinite(r) && r > 0);
  return rates.length ? rates.reduce((a, b) => a + b, 0) / rates.length : null;
}

/** Competition ranks (1, 2, 2, 4) by a score, higher first; entries without a score get null. */
function ranksBy<T>(items: readonly T[], score: (t: T) => number | null): (number | null)[] {
  return items.map((t) => {
    const s = score(t);
    if (s === null) return null;
    return 1 + items.filter((o) => (score(o) ?? Number.NEGATIVE_INFINITY) > s).length;
  });
}

const num = (n: number, digits = 2): string => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const pct = (a: number, b: number): string => `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(1)}%`;

function commonTerms(caps: readonly CapacityResult[]): CapacityRanking['terms'] {
  const all = caps.map(capacityTerms);
  const one = (k: keyof CapacityTerms): string | null => (new Set(all.map((t) => t[k])).size === 1 ? (all[0]?.[k] ?? null) : null);
  return { slo: one('slo'), attainment: one('attainment'), errorShare: one('errorShare'), axis: one('axis') };
}

/** The ranking, or undefined when fewer than two of the runs are capacity runs. */
export function rankCapacity(runs: readonly StoredRun[], names: readonly string[], opts: PriceOptions): CapacityRanking | undefined {
  const picked = runs.map((run, i) => ({ run, series: names[i] ?? run.id, c: run.summary.capacity })).filter((r): r is { run: StoredRun; series: string; c: CapacityResult } => r.c !== undefined);
  if (picked.length < 2) return undefined;
  const terms = commonTerms(picked.map((p) => p.c));
  const sameUnit = terms.axis !== null;
  const rows = picked.map(({ run, series, c }) => {
    const { context, target } = run.summary;
    const gpus = context.gpus ?? 1;
    const hardware = hardwareKind(context);
    const perS = requestsPerSAtCapacity(run, c);
    const price = runPrice(run, opts).price ?? null;
    return {
      runId: run.id,
      series,
      engine: target.engine && target.engine !== 'unknown' ? target.engine : context.engine,
      gpu: context.gpu ?? null,
      gpus,
      gpusAssumed: hardware === 'gpu' && context.gpus === undefined,
      hardware,
      axis: c.axis,
      unit: c.unit,
      feasibleMax: c.feasibleMax,
      firstBreach: c.firstBreach,
      precision: c.precision,
      requestsPerSAtCapacity: perS,
      capacityPerGpu: c.feasibleMax === null || hardware !== 'gpu' ? null : c.feasibleMax / gpus,
      gpuHourPrice: price,
      requestsPerDollar: price !== null && perS !== null ? (perS * 3600) / (price * gpus) : null,
      c,
      run,
    };
  });
  // Capacities in different units (streams vs req/s, only with --allow-mismatch) are ordered by the request rate they serve.
  const key = (r: (typeof rows)[number]): number | null => (sameUnit ? r.feasibleMax : r.requestsPerSAtCapacity);
  const last = rows.length;
  const rank = ranksBy(rows, key).map((r) => r ?? last);
  const perGpuKey = (r: (typeof rows)[number]): number | null => (r.hardware !== 'gpu' ? null : sameUnit ? r.capacityPerGpu : r.requestsPerSAtCapacity === null ? null : r.requestsPerSAtCapacity / r.gpus);
  const rankPerGpu = ranksBy(rows, perGpuKey);
  const rankPerDollar = ranksBy(rows, (r) => r.requestsPerDollar);
  const order = rows.map((_, i) => i).sort((a, b) => (rank[a] as number) - (rank[b] as number) || a - b);
  const entries: CapacityRankEntry[] = order.map((i) => {
    const { c: _c, run: _run, ...r } = rows[i] as (typeof rows)[number];
    return { ...r, rank: rank[i] as number, rankPerGpu: rankPerGpu[i] ?? null, rankPerDollar: rankPerDollar[i] ?? null };
  });
  const caps = order.map((i) => (rows[i] as (typeof rows)[number]).c);
  const ranked = order.map((i) => (rows[i] as (typeof rows)[number]).run);
  return {
    orderedBy: sameUnit ? `capacity (${picked[0]?.c.unit})` : 'request rate at capacity (the runs differ in axis)',
    entries,
    table: rankingTable(entries, caps, ranked, opts),
    lines: rankingLines(entries, caps, ranked, terms, opts, runs.length - picked.length),
    terms,
  };
}

function rankingTable(entries: readonly CapacityRankEntry[], caps: readonly CapacityResult[], runs: readonly StoredRun[], opts: PriceOptions): Table {
  const concurrency = entries.some((e) => e.axis === 'concurrency');
  // Per GPU only where some run ran on GPUs; a CPU server (or one that recorded no hardware) has no GPU to divide by.
  const perGpu = entries.some((e) => e.hardware === 'gpu');
  const headers = ['Rank', 'Run', 'Engine', perGpu ? 'GPUs' : 'Hardware', 'Capacity', 'First failure', ...(perGpu ? ['Capacity per GPU (rank)'] : [])];
  if (concurrency) headers.push('req/s at capacity');
  if (pricesGiven(opts)) headers.push(`Requests per $ at capacity (${priceBasis(runs, opts)}) (rank)`);
  const rows = entries.map((e, i) => {
    const c = caps[i] as CapacityResult;
    const perGpuUnit = e.unit === 'streams' ? 'streams' : 'req/s';
    const row = [
      String(e.rank),
      e.series,
      e.engine,
      hardwareCell(e),
      capacityCell(c, { predicted: (runs[i] as StoredRun).summary.context.predicted === true }),
      e.firstBreach === null ? (e.feasibleMax === null ? '—' : 'none (search ceiling)') : loadText(e.firstBreach, e.unit),
    ];
    if (perGpu) row.push(e.capacityPerGpu === null ? (e.hardware === 'gpu' ? '—' : `— (${e.hardware === 'cpu' ? 'a CPU' : 'no GPU recorded'})`) : `${num(e.capacityPerGpu)} ${perGpuUnit} (#${e.rankPerGpu})`);
    if (concurrency) row.push(e.requestsPerSAtCapacity === null ? '—' : num(e.requestsPerSAtCapacity));
    if (pricesGiven(opts)) {
      const price = runPrice(runs[i] as StoredRun, opts);
      row.push(price.price === undefined ? unpricedCell(price) : e.requestsPerDollar === null ? '—' : `${num(e.requestsPerDollar, 0)} (#${e.rankPerDollar})`);
    }
    return row;
  });
  return { headers, rows };
}

/** Two capacities are told apart only when their brackets [last pass, first failure) do not overlap. */
function overlaps(a: CapacityRankEntry, b: CapacityRankEntry): boolean {
  if (a.feasibleMax === null || b.feasibleMax === null) return false;
  const aHi = a.firstBreach ?? Number.POSITIVE_INFINITY;
  const bHi = b.firstBreach ?? Number.POSITIVE_INFINITY;
  return a.feasibleMax < bHi && b.feasibleMax < aHi;
}

function rankingLines(
  entries: readonly CapacityRankEntry[],
  caps: readonly CapacityResult[],
  runs: readonly StoredRun[],
  terms: CapacityRanking['terms'],
  opts: PriceOptions,
  leftOut: number,
): string[] {
  const lines: string[] = [];
  const differ = (Object.keys(terms) as (keyof CapacityTerms)[]).filter((k) => terms[k] === null);
  if (differ.length) {
    const what = caps.map((c, i) => `${entries[i]?.series}: ${c.attainment}% within ${sloLimitsText(c.slo)}, ${capacityTerms(c).errorShare}, ${c.axis} axis`).join('; ');
    lines.push(`WARNING: the capacities were measured under different terms (${differ.join(', ').replace('errorShare', 'error limit')}): ${what}. The ranking does not compare like with like.`);
  } else {
    lines.push(`All runs: capacity = the highest load on the ${terms.axis} axis at which ${terms.attainment} met ${terms.slo} (= p${caps[0]?.attainment} within each limit, failed requests counting as misses), ${terms.errorShare}.`);
  }
  const [a, b] = entries;
  if (a && b && a.feasibleMax !== null && b.feasibleMax !== null) {
    const unit = a.unit === b.unit ? a.unit : undefined;
    const lead = unit ? `${loadText(a.feasibleMax, a.unit)}, ${pct(a.feasibleMax, b.feasibleMax)} over ${b.series} (${loadText(b.feasibleMax, b.unit)})` : `${num(a.requestsPerSAtCapacity ?? Number.NaN)} req/s at capacity`;
    lines.push(`Highest capacity: ${a.series} — ${lead}.`);
    if (overlaps(a, b)) {
      lines.push(
        `${a.series} and ${b.series} are within the search's precision of each other (brackets ${bracket(a)} and ${bracket(b)} overlap): their order is not settled; a finer --capacity-precision would settle it.`,
      );
    }
  } else if (a && a.feasibleMax !== null) {
    lines.push(`Only ${a.series} met the SLO at any load: ${loadText(a.feasibleMax, a.unit)}.`);
  } else {
    lines.push('No run met the SLO at any load.');
  }
  const best = (by: (e: CapacityRankEntry) => number | null): CapacityRankEntry[] => entries.filter((e) => by(e) !== null).sort((x, y) => (by(y) as number) - (by(x) as number));
  const g = best((e) => e.capacityPerGpu);
  if (g.length >= 2 && g[0] && g[1]) {
    const u = (e: CapacityRankEntry): string => `${num(e.capacityPerGpu as number)} ${e.unit === 'streams' ? 'streams' : 'req/s'} per GPU`;
    lines.push(`Most capacity per GPU: ${g[0].series} — ${u(g[0])} (next: ${g[1].series} at ${u(g[1])}).`);
  }
  if (!pricesGiven(opts)) {
    lines.push('Add --gpu-hour-price USD for the requests served per dollar at capacity.');
  } else {
    const d = best((e) => e.requestsPerDollar);
    if (d.length >= 2 && d[0] && d[1]) lines.push(`Most requests per $: ${d[0].series} — ${num(d[0].requestsPerDollar as number, 0)} requests per $ at capacity (next: ${d[1].series} at ${num(d[1].requestsPerDollar as number, 0)}).`);
    const concurrency = entries.some((e) => e.axis === 'concurrency') ? "; on the concurrency axis, at the achieved req/s of the capacity's stream count" : '';
    const price = opts.gpuHourPrice !== undefined ? `$${opts.gpuHourPrice} per GPU-hour` : "the run's GPU-hour price";
    const each = opts.gpuHourPrice !== undefined ? '' : `, ${priceBasis(runs, opts)}`;
    lines.push(`Requests per $ = requests served in one hour at capacity ÷ (${price} × the run's GPUs)${concurrency}${each}.`);
    lines.push(...missingPriceLines(runs, entries.map((e) => e.series), opts));
  }
  const ceiling = entries.filter((e) => e.feasibleMax !== null && e.firstBreach === null);
  if (ceiling.length) lines.push(`No load failed for ${ceiling.map((e) => e.series).join(', ')}: the search hit its ceiling, so the capacity is a lower bound.`);
  const none = entries.filter((e) => e.feasibleMax === null);
  if (none.length) lines.push(`Even the lowest load failed the SLO for ${none.map((e) => e.series).join(', ')} (ranked last).`);
  if (leftOut > 0) lines.push(`${leftOut} run${leftOut === 1 ? ' is' : 's are'} not a capacity run and ${leftOut === 1 ? 'is' : 'are'} left out of the ranking.`);
  return lines;
}

const bracket = (e: CapacityRankEntry): string => `[${loadText(e.feasibleMax as number, e.unit)}, ${e.firstBreach === null ? '∞' : loadText(e.firstBreach, e.unit)})`;

/**
 * capacity-ranking.csv: one number per cell, units in snake_case headers (as table.csv), one line per ranked run;
 * empty cells where a figure is not known.
 */
export function renderCapacityRankingCsv(ranking: CapacityRanking): string {
  const headers = [
    'rank', 'run_id', 'series', 'engine', 'gpu', 'gpus', 'axis', 'unit', 'capacity', 'first_breach', 'precision',
    'requests_per_s_at_capacity', 'capacity_per_gpu', 'rank_per_gpu', 'gpu_hour_price_usd', 'requests_per_usd', 'rank_per_usd',
  ];
  const cell = (v: string | number | null): string => {
    if (v === null) return '';
    if (typeof v === 'number') return String(+v.toFixed(6));
    return /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
  };
  const rows = ranking.entries.map((e) =>
    [
      e.rank, e.runId, e.series, e.engine, e.gpu, e.gpus, e.axis, e.unit, e.feasibleMax, e.firstBreach, e.precision,
      e.requestsPerSAtCapacity, e.capacityPerGpu, e.rankPerGpu, e.gpuHourPrice, e.requestsPerDollar, e.rankPerDollar,
    ].map(cell).join(','),
  );
  return `${[headers.join(','), ...rows].join('\n')}\n`;
}
