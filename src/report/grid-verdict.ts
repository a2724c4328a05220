import type { StageSummary } from '../metrics/summary.js';
import type { StoredRun } from '../store/run-store.js';
import { gridCells } from './layouts.js';
import { missingPriceLines, priceBasis, pricesGiven, runPrice, unpricedCell } from './gpu-prices.js';
import { costPerMillion, gpuCount, meetsSlo, mismatchWarning, sloAttainmentOf, sloText, type Verdict, type VerdictOptions } from './verdict.js';
import { judge, meanNoise, noiseText, throughputNoise, weighsNoise, type Noisy } from './verdict-noise.js';

const f = (n: number | undefined, d = 2): string => (n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(d));
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

const ok = (s: StageSummary | undefined): s is StageSummary => s !== undefined && s.requests.ok > 0;
const top = (rows: readonly StageSummary[]): StageSummary | undefined =>
  rows.reduce<StageSummary | undefined>((b, s) => (!b || s.outputTokenThroughput > b.outputTokenThroughput ? s : b), undefined);

/** A run's cells by "input/output": throughput from the cell's burst, latency from its low-load pass (or the burst). */
function cellsOf(run: StoredRun): Map<string, { key: string; throughput?: StageSummary; latency?: StageSummary; stages: StageSummary[] }> {
  return new Map(
    gridCells(run.summary.stages).map((c) => {
      const key = `${c.input}/${c.output}`;
      const stages = [c.throughput, c.latency].filter(ok);
      const latency = ok(c.latency) ? c.latency : ok(c.throughput) ? c.throughput : undefined;
      return [key, { key, ...(ok(c.throughput) ? { throughput: c.throughput } : {}), ...(latency ? { latency } : {}), stages }] as const;
    }),
  );
}

/**
 * Grids have no offered rate to match: the matched load is the input/output cell. Compare over the cells
 * every run completed, count cell wins, and price the best cell (with an SLO: the busiest measured load of
 * any cell that met it — the cell's burst if it did, else its low-load pass).
 */
export function computeGridVerdict(runs: readonly StoredRun[], names: readonly string[], opts: VerdictOptions): Verdict {
  const cellMaps = runs.map(cellsOf);
  const attainment = sloAttainmentOf(runs, opts);
  const sloSaid = opts.slo ? sloText(opts.slo, attainment) : undefined;
  const common = [...(cellMaps[0]?.keys() ?? [])].filter((k) => cellMaps.every((m) => m.get(k)?.throughput !== undefined));
  const tokAt = (i: number, k: string): number => cellMaps[i]?.get(k)?.throughput?.outputTokenThroughput ?? Number.NaN;

  const per = runs.map((run, i) => {
    const cells = [...(cellMaps[i]?.values() ?? [])].filter((c) => c.stages.length > 0);
    const best = top(cells.flatMap((c) => (c.throughput ? [c.throughput] : [])));
    const tok = common.map((k) => tokAt(i, k));
    const lat = common.map((k) => cellMaps[i]?.get(k)?.latency?.metrics.latencyPerOutputTokenMs?.mean ?? Number.NaN);
    const wins = common.filter((k) => runs.every((_, j) => tokAt(i, k) >= tokAt(j, k))).length;
    // The means over the common cells carry each cell's own noise: half-width of a mean of k = √Σ hw² / k.
    const measured = weighsNoise(run);
    const cellNoise = common.map((k) => {
      const c = cellMaps[i]?.get(k);
      const t = c?.throughput ? throughputNoise(c.throughput, c.throughput.outputTokenThroughput, 'outputTokenThroughput', measured) : undefined;
      const l = c?.latency ? meanNoise(c.latency, 'latencyPerOutputTokenMs', undefined, measured) : undefined;
      return { t, l };
    });
    const meanOf = (value: number, parts: (Noisy | undefined)[]): Noisy => ({
      value,
      halfWidth95: parts.length ? Math.hypot(...parts.map((p) => p?.halfWidth95 ?? 0)) / parts.length : 0,
      source: parts.every((p) => p?.source === 'repeat') ? 'repeat' : parts.every((p) => !p || p.source === 'none') ? 'none' : 'row',
    });
    const meeting = opts.slo ? cells.flatMap((c) => c.stages.filter((s) => meetsSlo(s, opts.slo ?? {}, attainment))) : undefined;
    const slo = opts.slo ? cells.filter((c) => c.stages.some((s) => meetsSlo(s, opts.slo ?? {}, attainment))).length : undefined;
    // With an SLO, price the busiest load that met it: a load the server serves too slowly is not on offer.
    const costCell = meeting ? top(meeting) : best;
    const price = runPrice(run, opts);
    const cost = price.price !== undefined && costCell ? costPerMillion(price.price, run.summary.context.gpus ?? 1, costCell.outputTokenThroughput) : undefined;
    const meanTok = tok.length ? mean(tok) : Number.NaN;
    const meanLat = lat.length ? mean(lat) : Number.NaN;
    const tokNoise = meanOf(meanTok, cellNoise.map((c) => c.t));
    const latNoise = meanOf(meanLat, cellNoise.map((c) => c.l));
    return { series: names[i] ?? run.id, best, costCell, meanTok, meanLat, tokNoise, latNoise, wins, slo, cells: cells.length, cost, price };
  });

  const headers = ['Run', 'Best output tok/s (cell)', `Mean output tok/s over ${common.length} common cells`, 'Mean latency per output token (ms)', 'Cells with most output tok/s'];
  if (opts.slo) headers.push(`Cells meeting SLO`);
  if (pricesGiven(opts)) headers.push(`$ per 1M output tokens, best cell${opts.slo ? ' meeting the SLO' : ''} (${priceBasis(runs, opts)})`);
  const rows = per.map((p, i) => {
    const row = [p.series, p.best ? `${f(p.best.outputTokenThroughput)} (${p.best.label})` : 'no request completed', f(p.meanTok), f(p.meanLat), `${p.wins}/${common.length}`];
    if (opts.slo) row.push(`${p.slo}/${p.cells}`);
    if (pricesGiven(opts)) {
      const where = opts.slo && p.costCell ? `, ${p.costCell.label}` : '';
      const run = runs[i] as StoredRun;
      if (p.price.price === undefined) row.push(unpricedCell(p.price));
      else row.push(p.cost !== undefined ? `$${f(p.cost, 3)} (${gpuCount(run, opts)}${where})` : opts.slo ? '— (no cell met the SLO)' : '—');
    }
    return row;
  });

  const lines: string[] = mismatchWarning(opts);
  const ranked = per.filter((p) => Number.isFinite(p.meanTok)).sort((a, b) => b.meanTok - a.meanTok);
  const [a, b] = ranked;
  if (a && b) {
    const gap = `${a.meanTok >= b.meanTok ? '+' : ''}${(((a.meanTok - b.meanTok) / b.meanTok) * 100).toFixed(1)}%`;
    const j = judge(a.tokNoise, b.tokNoise);
    if (j.kind === 'tie') lines.push(`Output tokens/s over the ${common.length} common cells: a tie — ${a.series} and ${b.series} both mean ${f(a.meanTok)} tok/s.`);
    else if (j.kind === 'noise') lines.push(`Output tokens/s over the ${common.length} common cells: no clear leader — ${a.series} mean ${f(a.meanTok)} tok/s vs ${b.series} ${f(b.meanTok)} (${gap}), ${noiseText(j, a.meanTok)}.`);
    else lines.push(`Most output tokens/s over the ${common.length} common cells: ${a.series} — mean ${f(a.meanTok)} tok/s, ${gap} over ${b.series}; it leads in ${a.wins} of ${common.length} cells.`);
    const lat = [...ranked].filter((p) => Number.isFinite(p.meanLat)).sort((x, y) => x.meanLat - y.meanLat);
    const [l0, l1] = lat;
    if (l0 && l1) {
      const jl = judge(l0.latNoise, l1.latNoise);
      if (jl.kind === 'tie') lines.push(`Latency per output token: a tie — ${l0.series} and ${l1.series} both ${f(l0.meanLat)} ms.`);
      else if (jl.kind === 'noise') lines.push(`Latency per output token: no clear leader — ${l0.series} ${f(l0.meanLat)} ms vs ${l1.series} ${f(l1.meanLat)} ms, ${noiseText(jl, l0.meanLat)}.`);
      else lines.push(`Lowest latency per output token: ${l0.series} (${f(l0.meanLat)} ms vs ${f(l1.meanLat)} ms).`);
    }
  } else if (common.length === 0) {
    lines.push('The runs share no input/output cell that completed: nothing to compare at matched load.');
  }
  if (opts.slo) {
    const bySlo = [...per].sort((x, y) => (y.slo ?? 0) - (x.slo ?? 0));
    const [s1, s2] = bySlo;
    if (s1 && s2 && s1.slo === s2.slo) lines.push(`Cells within the SLO (${sloSaid}): a tie at the top, ${s1.slo} cells each for ${bySlo.filter((p) => p.slo === s1.slo).map((p) => p.series).join(', ')}.`);
    else if (s1) lines.push(`Most cells within the SLO (${sloSaid}): ${s1.series} (${s1.slo}/${s1.cells}).`);
  }
  const cheap = per.filter((p) => p.cost !== undefined).sort((x, y) => (x.cost as number) - (y.cost as number));
  if (cheap[0] && cheap[1]) lines.push(`Cheapest per output token (best cell${opts.slo ? ' meeting the SLO' : ''}): ${cheap[0].series} at $${f(cheap[0].cost, 3)} per 1M (vs $${f(cheap[1].cost, 3)}).`);
  lines.push(...missingPriceLines(runs, names, opts));
  const num = (n: number | undefined): number | null => (n !== undefined && Number.isFinite(n) ? n : null);
  const figures = per.map((p, i) => ({
    run: p.series,
    bestOutputTokensPerS: num(p.best?.outputTokenThroughput),
    bestCell: p.best?.label ?? null,
    commonCells: common.length,
    meanOutputTokensPerSOverCommonCells: num(p.meanTok),
    meanLatencyPerOutputTokenMs: num(p.meanLat),
    cellsLeading: p.wins,
    cellsMeasured: p.cells,
    ...(opts.slo ? { cellsMeetingSlo: p.slo ?? 0 } : {}),
    gpus: runs[i]?.summary.context.gpus ?? 1,
    gpuHourPriceUsd: p.price.price ?? null,
    costUsdPerMillionOutputTokens: num(p.cost),
    costCell: p.cost !== undefined ? (p.costCell?.label ?? null) : null,
  }));
  return {
    ...(sloSaid !== undefined ? { sloText: sloSaid } : {}),
    runs: per.map((p) => ({ series: p.series, ...(p.cost !== undefined && p.price.price !== undefined ? { costPerMillion: p.cost, gpuHourPrice: p.price.price } : {}) })),
    figures,
    table: { headers, rows },
    lines,
  };
}
