import { onCurve, type StageSummary } from '../metrics/summary.js';
import { loadRows, risesWithLoad, rowAtStreams, streamsOf } from './matched-load.js';
import { definitionLines } from '../interop/definitions.js';
import type { StoredRun } from '../store/run-store.js';
import { pricesGiven } from './gpu-prices.js';
import { type GridCell, gridCells, gridTable, sweepHeader, sweepOrder, sweepTable } from './layouts.js';
import { renderCsv, renderMarkdown, type Table } from './table.js';
import { numericTable } from './csv-numeric.js';
import { flaggedCells, lengthGapTexts, measuredLengthGaps, MEASURED_LENGTH_TOLERANCE } from './measured-lengths.js';

/** After a Δ whose cell served other lengths than the first run's (measured-lengths.ts). */
const LENGTH_GAP_MARK = '≠len';
import { interpolateAt, mismatchWarning, sloText, type Verdict, type VerdictOptions } from './verdict.js';

/** One run's table under its heading, as the seeds stack them. */
export interface CompareSection {
  run: StoredRun;
  series: string;
  heading: string;
  table: Table;
}

const delta = (a: number | undefined, b: number | undefined): string =>
  a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? '—' : `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(1)}%`;

/** Seed 004: a grid table per run, stacked, with deltas against the first run cell by cell (its burst, its latency pass). */
function gridSections(runs: readonly StoredRun[], names: readonly string[]): CompareSection[] {
  const key = (c: GridCell): string => `${c.input}/${c.output}`;
  const first = new Map(gridCells(runs[0]?.summary.stages ?? []).map((c) => [key(c), c] as const));
  const usable = (s: StageSummary | undefined): StageSummary | undefined => (s && s.requests.ok > 0 ? s : undefined);
  const latencyOf = (c: GridCell | undefined): StageSummary | undefined => usable(c?.latency) ?? usable(c?.throughput);
  const gaps = measuredLengthGaps(runs, names);
  return runs.map((run, i) => {
    const table = gridTable(run.summary.stages);
    // Cells whose measured lengths are off the first run's (compare --allow-mismatch): their Δ compares other work.
    const flagged = flaggedCells(gaps, names[i] ?? run.id);
    const mark = (c: GridCell, text: string): string => (flagged.has(key(c)) && text !== '—' ? `${text} ${LENGTH_GAP_MARK}` : text);
    if (i > 0) {
      table.headers.push('Δ req/s vs 1st', 'Δ output tok/s vs 1st', 'Δ latency per output token vs 1st');
      // gridTable has one row per cell, in gridCells order.
      gridCells(run.summary.stages).forEach((c, r) => {
        const b = first.get(key(c));
        const t = usable(c.throughput);
        const bt = usable(b?.throughput);
        const l = latencyOf(c);
        const bl = latencyOf(b);
        table.rows[r]?.push(
          mark(c, t ? delta(t.requestThroughput, bt?.requestThroughput) : '—'),
          mark(c, t ? delta(t.outputTokenThroughput, bt?.outputTokenThroughput) : '—'),
          mark(c, l ? delta(l.metrics.latencyPerOutputTokenMs?.mean, bl?.metrics.latencyPerOutputTokenMs?.mean) : '—'),
        );
      });
    }
    return { run, series: names[i] ?? run.id, heading: `## ${names[i] ?? run.id}`, table };
  });
}

/**
 * Seed 003: one sweep table per configuration; Δ against the first run at the same load (matched-load.ts): a
 * closed-loop row against the first run's row of the same concurrency, any other row against the first run's curve
 * read at this row's achieved rate — when that curve is one (its req/s rises with its load).
 */
function sweepSections(runs: readonly StoredRun[], names: readonly string[]): CompareSection[] {
  const first = runs[0];
  const firstRows = first ? loadRows(first) : [];
  const readable = risesWithLoad(firstRows);
  const firstAt = (pick: (s: StageSummary) => number | undefined, x: number): number | undefined =>
    readable ? interpolateAt(firstRows.map((s) => ({ x: s.requestThroughput, y: pick(s) ?? Number.NaN })), x) : undefined;
  return runs.map((run, i) => {
    const stages = [...run.summary.stages].sort((a, b) => sweepOrder(a) - sweepOrder(b));
    const table = sweepTable(stages);
    if (i > 0 && first) {
      const matchedBy = new Set<'concurrency' | 'rate'>();
      stages.forEach((s, r) => {
        if (!onCurve(s) || s.kind === 'burst') {
          table.rows[r]?.push('—', '—');
          return;
        }
        const streams = streamsOf(s);
        const same = streams !== undefined ? rowAtStreams(first, streams) : undefined;
        const at = (pick: (x: StageSummary) => number | undefined): number | undefined => (same ? pick(same) : firstAt(pick, s.requestThroughput));
        matchedBy.add(same ? 'concurrency' : 'rate');
        table.rows[r]?.push(delta(s.metrics.ttftMs?.mean, at((f) => f.metrics.ttftMs?.mean)), delta(s.metrics.itlMs?.mean, at((f) => f.metrics.itlMs?.mean)));
      });
      const where = matchedBy.size === 1 && matchedBy.has('concurrency') ? 'same concurrency' : matchedBy.size === 1 && matchedBy.has('rate') ? 'same req/s' : 'same load';
      table.headers.push(`Δ TTFT vs 1st @ ${where}`, `Δ ITL vs 1st @ ${where}`);
    }
    return { run, series: names[i] ?? run.id, heading: sweepHeader(run.summary.context), table };
  });
}

export function compareSections(runs: readonly StoredRun[], names: readonly string[]): CompareSection[] {
  return runs[0]?.summary.layout === 'grid' ? gridSections(runs, names) : sweepSections(runs, names);
}

/**
 * The lines compare.md prints under its tables (the HTML report carries the same): what the marks and the Δ columns
 * mean, and for runs imported from other tools how their figures map onto inferbench's definitions.
 */
export function compareNoteLines(sections: readonly CompareSection[], shown: readonly string[] = []): { legend: string[]; definitions: string[] } {
  const runs = sections.map((s) => s.run);
  const legend: string[] = [];
  if (runs.some((r) => r.summary.stages.some((s) => s.belowTarget))) legend.push('\\* completed under 90% of the target rate: the server could not keep up.');
  if (runs[0]?.summary.layout === 'grid') legend.push('Δ columns: change against the first run, cell by cell.');
  else {
    legend.push('Δ columns: change against the first run — a closed-loop row against its row of the same concurrency, other rows against its curve read at the same achieved request rate.');
    const firstRows = runs[0] ? loadRows(runs[0]) : [];
    if (firstRows.length >= 2 && !risesWithLoad(firstRows)) {
      legend.push("The first run's req/s does not rise with its load (added load only queued), so its curve is not read between rows: a row with no row of the same concurrency there has no Δ.");
    }
  }
  const gaps = measuredLengthGaps(runs, sections.map((s) => s.series));
  if (gaps.length > 0) {
    const where = gaps.some((g) => g.cell !== undefined) ? `${LENGTH_GAP_MARK} on a Δ: that cell's` : 'the runs\'';
    const texts = lengthGapTexts(gaps);
    // The figures once: when the WARNING above the tables already gives them, the legend points to it.
    const figures = texts.every((t) => shown.includes(t)) ? ' (figures in the WARNING above)' : ` — ${texts.join('; ')}`;
    legend.push(`${where} measured mean lengths differ from the first run's by more than ${MEASURED_LENGTH_TOLERANCE * 100}%, so the Δ compares different work${figures}`);
  }
  return { legend, definitions: definitionLines(runs, sections.map((s) => s.series)) };
}

export function renderCompareMarkdown(
  sections: readonly CompareSection[],
  verdict: Verdict,
  opts: VerdictOptions,
  capacity?: { table: Table; lines: readonly string[] },
): string {
  const runs = sections.map((s) => s.run);
  const models = [...new Set(runs.map((r) => r.summary.context.model))];
  const out: string[] = [];
  // Runs compared although they differ (--allow-mismatch): say so before any figure, in bold.
  const warnings = mismatchWarning(opts);
  for (const w of warnings) out.push(`**${w}**`, '');
  if (runs[0]?.summary.layout === 'grid') out.push(`# ${models.join(' vs ')}`, '');
  for (const s of sections) out.push(s.heading, '', renderMarkdown(s.table), '');
  const notes = compareNoteLines(sections, warnings.length ? (opts.mismatches ?? []) : []);
  out.push(...notes.legend.flatMap((l) => [l, '']));
  if (notes.definitions.length) out.push(...notes.definitions.map((l) => `- ${l}`), '');
  if (capacity) {
    out.push('## Capacity ranking', '', renderMarkdown(capacity.table), '');
    for (const line of capacity.lines) out.push(`- ${line}`);
    out.push('');
  }
  const slo = opts.slo ? (verdict.sloText ?? sloText(opts.slo)) : undefined;
  out.push(`## Verdict at matched load${slo !== undefined ? ` (SLO: ${slo}, no failed request)` : ''}`, '', renderMarkdown(verdict.table), '');
  for (const line of verdict.lines) if (!warnings.includes(line)) out.push(`- ${line}`);
  if (!pricesGiven(opts)) out.push('- Add --gpu-hour-price USD for the cost per 1M output tokens.');
  return `${out.join('\n')}\n`;
}

/**
 * compare.csv: every run's numeric table (csv-numeric.ts) stacked, a `run` column first so spreadsheets can pivot on
 * it. The Δ columns of compare.md are left to the reader's formula: this file holds the figures themselves.
 */
export function renderCompareCsv(sections: readonly CompareSection[]): string {
  const tables = sections.map((s) => ({ series: s.series, table: numericTable(s.run.summary.layout, s.run.summary.stages, s.run.summary.capacity) }));
  const headers = ['run', ...(tables[0]?.table.headers ?? [])];
  return renderCsv({ headers, rows: tables.flatMap((t) => t.table.rows.map((r) => [t.series, ...r])) });
}
