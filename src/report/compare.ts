import type { StageSummary } from '../metrics/summary.js';
import type { StoredRun } from '../store/run-store.js';
import { gridTable, sweepHeader, sweepOrder, sweepTable } from './layouts.js';
import { renderCsv, renderMarkdown, type Table } from './table.js';
import { interpolateAt, sloText, type Verdict, type VerdictOptions } from './verdict.js';

/** One run's table under its heading, as the seeds stack them. */
export interface CompareSection {
  run: StoredRun;
  series: string;
  heading: string;
  table: Table;
}

const delta = (a: number | undefined, b: number | undefined): string =>
  a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? '—' : `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(1)}%`;

/** Seed 004: a grid table per run, stacked, with deltas against the first run cell by cell. */
function gridSections(runs: readonly StoredRun[], names: readonly string[]): CompareSection[] {
  const first = new Map((runs[0]?.summary.stages ?? []).filter((s) => s.requests.ok > 0).map((s) => [s.label, s] as const));
  return runs.map((run, i) => {
    const table = gridTable(run.summary.stages);
    if (i > 0) {
      table.headers.push('Δ req/s vs 1st', 'Δ output tok/s vs 1st', 'Δ latency per output token vs 1st');
      run.summary.stages.forEach((s, r) => {
        const b = first.get(s.label);
        const ok = s.requests.ok > 0;
        table.rows[r]?.push(
          ok ? delta(s.requestThroughput, b?.requestThroughput) : '—',
          ok ? delta(s.outputTokenThroughput, b?.outputTokenThroughput) : '—',
          ok ? delta(s.metrics.latencyPerOutputTokenMs?.mean, b?.metrics.latencyPerOutputTokenMs?.mean) : '—',
        );
      });
    }
    return { run, series: names[i] ?? run.id, heading: `## ${names[i] ?? run.id}`, table };
  });
}

/** Seed 003: one sweep table per configuration; deltas read the first run's curve at this row's achieved rate. */
function sweepSections(runs: readonly StoredRun[], names: readonly string[]): CompareSection[] {
  const firstRows = (runs[0]?.summary.stages ?? []).filter((s) => s.requests.ok > 0 && s.kind !== 'burst');
  const firstAt = (pick: (s: StageSummary) => number | undefined, x: number): number | undefined =>
    interpolateAt(firstRows.map((s) => ({ x: s.requestThroughput, y: pick(s) ?? Number.NaN })), x);
  return runs.map((run, i) => {
    const stages = [...run.summary.stages].sort((a, b) => sweepOrder(a) - sweepOrder(b));
    const table = sweepTable(stages);
    if (i > 0) {
      table.headers.push('Δ TTFT vs 1st @ same req/s', 'Δ ITL vs 1st @ same req/s');
      stages.forEach((s, r) => {
        const usable = s.requests.ok > 0 && s.kind !== 'burst';
        const x = s.requestThroughput;
        table.rows[r]?.push(
          usable ? delta(s.metrics.ttftMs?.mean, firstAt((f) => f.metrics.ttftMs?.mean, x)) : '—',
          usable ? delta(s.metrics.itlMs?.mean, firstAt((f) => f.metrics.itlMs?.mean, x)) : '—',
        );
      });
    }
    return { run, series: names[i] ?? run.id, heading: sweepHeader(run.summary.context), table };
  });
}

export function compareSections(runs: readonly StoredRun[], names: readonly string[]): CompareSection[] {
  return runs[0]?.summary.layout === 'grid' ? gridSections(runs, names) : sweepSections(runs, names);
}

export function renderCompareMarkdown(sections: readonly CompareSection[], verdict: Verdict, opts: VerdictOptions): string {
  const runs = sections.map((s) => s.run);
  const models = [...new Set(runs.map((r) => r.summary.context.model))];
  const out: string[] = [];
  if (runs[0]?.summary.layout === 'grid') out.push(`# ${models.join(' vs ')}`, '');
  for (const s of sections) out.push(s.heading, '', renderMarkdown(s.table), '');
  if (runs.some((r) => r.summary.stages.some((s) => s.belowTarget))) out.push('\\* completed under 90% of the target rate: the server could not keep up.', '');
  out.push('Δ columns: change against the first run (for sweeps, its curve read at the same achieved request rate).', '');
  out.push(`## Verdict at matched load${opts.slo ? ` (SLO: ${sloText(opts.slo)}, no failed request)` : ''}`, '', renderMarkdown(verdict.table), '');
  for (const line of verdict.lines) out.push(`- ${line}`);
  if (opts.gpuHourPrice === undefined) out.push('- Add --gpu-hour-price USD for the cost per 1M output tokens.');
  return `${out.join('\n')}\n`;
}

/** All sections in one CSV: a Run column first, so spreadsheets can pivot on it. */
export function renderCompareCsv(sections: readonly CompareSection[]): string {
  const headers = ['Run', ...(sections.reduce<string[]>((a, s) => (s.table.headers.length > a.length ? s.table.headers : a), []))];
  const rows = sections.flatMap((s) => s.table.rows.map((r) => [s.series, ...r, ...Array<string>(headers.length - 1 - r.length).fill('')]));
  return renderCsv({ headers, rows });
}
