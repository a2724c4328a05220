import type { StageSummary } from '../metrics/summary.js';
import type { StoredRun } from '../store/run-store.js';
import { costPerMillion, meetsSlo, sloText, type Verdict, type VerdictOptions } from './verdict.js';

const f = (n: number | undefined, d = 2): string => (n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(d));
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * Grids have no offered rate to match: the matched load is the input/output cell. Compare over the cells
 * every run completed, count cell wins, and price the best cell.
 */
export function computeGridVerdict(runs: readonly StoredRun[], names: readonly string[], opts: VerdictOptions): Verdict {
  const okCells = runs.map((r) => new Map(r.summary.stages.filter((s) => s.requests.ok > 0).map((s) => [s.label, s] as const)));
  const common = [...(okCells[0]?.keys() ?? [])].filter((label) => okCells.every((m) => m.has(label)));
  const cell = (i: number, label: string): StageSummary => okCells[i]?.get(label) as StageSummary;

  const per = runs.map((run, i) => {
    const stages = [...(okCells[i]?.values() ?? [])];
    const best = stages.reduce<StageSummary | undefined>((b, s) => (!b || s.outputTokenThroughput > b.outputTokenThroughput ? s : b), undefined);
    const tok = common.map((l) => cell(i, l).outputTokenThroughput);
    const lat = common.map((l) => cell(i, l).metrics.latencyPerOutputTokenMs?.mean ?? Number.NaN);
    const wins = common.filter((l) => runs.every((_, j) => cell(i, l).outputTokenThroughput >= cell(j, l).outputTokenThroughput)).length;
    const slo = opts.slo ? stages.filter((s) => meetsSlo(s, opts.slo ?? {})).length : undefined;
    const cost = opts.gpuHourPrice !== undefined && best ? costPerMillion(opts.gpuHourPrice, run.summary.context.gpus ?? 1, best.outputTokenThroughput) : undefined;
    return { series: names[i] ?? run.id, best, meanTok: tok.length ? mean(tok) : Number.NaN, meanLat: lat.length ? mean(lat) : Number.NaN, wins, slo, cells: stages.length, cost };
  });

  const headers = ['Run', 'Best output tok/s (cell)', `Mean output tok/s over ${common.length} common cells`, 'Mean latency per output token (ms)', 'Cells with most output tok/s'];
  if (opts.slo) headers.push(`Cells meeting SLO`);
  if (opts.gpuHourPrice !== undefined) headers.push(`$ per 1M output tokens, best cell (at $${opts.gpuHourPrice}/GPU-hour)`);
  const rows = per.map((p, i) => {
    const row = [p.series, p.best ? `${f(p.best.outputTokenThroughput)} (${p.best.label})` : 'no request completed', f(p.meanTok), f(p.meanLat), `${p.wins}/${common.length}`];
    if (opts.slo) row.push(`${p.slo}/${p.cells}`);
    if (opts.gpuHourPrice !== undefined) row.push(p.cost !== undefined ? `$${f(p.cost, 3)} (${runs[i]?.summary.context.gpus ?? 1} GPU)` : '—');
    return row;
  });

  const lines: string[] = [];
  const ranked = per.filter((p) => Number.isFinite(p.meanTok)).sort((a, b) => b.meanTok - a.meanTok);
  const [a, b] = ranked;
  if (a && b) {
    lines.push(
      `Most output tokens/s over the ${common.length} common cells: ${a.series} — mean ${f(a.meanTok)} tok/s, ${a.meanTok >= b.meanTok ? '+' : ''}${(((a.meanTok - b.meanTok) / b.meanTok) * 100).toFixed(1)}% over ${b.series}; it leads in ${a.wins} of ${common.length} cells.`,
    );
    const lat = [...ranked].filter((p) => Number.isFinite(p.meanLat)).sort((x, y) => x.meanLat - y.meanLat);
    if (lat[0] && lat[1]) lines.push(`Lowest latency per output token: ${lat[0].series} (${f(lat[0].meanLat)} ms vs ${f(lat[1].meanLat)} ms).`);
  } else if (common.length === 0) {
    lines.push('The runs share no input/output cell that completed: nothing to compare at matched load.');
  }
  if (opts.slo) {
    const bySlo = [...per].sort((x, y) => (y.slo ?? 0) - (x.slo ?? 0));
    const [s1, s2] = bySlo;
    if (s1 && s2 && s1.slo === s2.slo) lines.push(`Cells within the SLO (${sloText(opts.slo)}): a tie at the top, ${s1.slo} cells each for ${bySlo.filter((p) => p.slo === s1.slo).map((p) => p.series).join(', ')}.`);
    else if (s1) lines.push(`Most cells within the SLO (${sloText(opts.slo)}): ${s1.series} (${s1.slo}/${s1.cells}).`);
  }
  const cheap = per.filter((p) => p.cost !== undefined).sort((x, y) => (x.cost as number) - (y.cost as number));
  if (cheap[0] && cheap[1]) lines.push(`Cheapest per output token (best cell): ${cheap[0].series} at $${f(cheap[0].cost, 3)} per 1M (vs $${f(cheap[1].cost, 3)}).`);
  return { runs: per.map((p) => ({ series: p.series })), table: { headers, rows }, lines };
}
