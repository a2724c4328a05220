import type { CapacityResult } from '../results/capacity.js';
import type { RunSummaryDoc } from '../results/run-summary.js';
import { MIN_PERCENTILE_SAMPLES } from '../metrics/summary.js';
import { gridHeader, gridTable, rowMarks, sweepHeader, sweepTable } from './layouts.js';
import { findingLines } from './findings.js';
import { capacityNoteLines } from './capacity-notes.js';
import { rowNoteLines } from './row-notes.js';
import { renderMarkdown } from './table.js';
import { renderNumericCsv } from './csv-numeric.js';
import { resolveColumns } from './columns.js';
import { reportRows } from './report-rows.js';
import { fromMarkdown, PLAIN, renderTerminalTable, type TerminalStyle } from './terminal.js';

// summary.json's shape is the results schema's (src/results/run-summary.ts); re-exported for existing imports.
export type { RunSummaryDoc, WorkloadSpecDoc } from '../results/run-summary.js';

/**
 * What goes under a run's table, in every rendering (terminal, table.md, report.html): findings, row notes, the
 * capacity notes. Markdown text (`\*`, `**bold**`); each renderer turns it into its own markup.
 */
export function runNoteLines(doc: RunSummaryDoc): string[] {
  // A prediction's token counts are the simulator's own: comparing them with themselves says nothing.
  const foot: string[] = doc.context.predicted ? [] : findingLines(doc.stages, { goodput: !doc.capacity });
  foot.push(...rowNoteLines(doc.stages));
  // The interrupted row itself is marked and explained by the row notes.
  if (doc.interrupted) foot.push('Interrupted: the run was stopped before its end; rows after the last one shown were not run (`inferbench run --resume` runs the cut row and the rest).');
  if (doc.capacity) foot.push(...capacityNoteLines(doc.capacity, doc.stages, { predicted: doc.context.predicted === true }));
  return foot;
}

/** table.md: the seed layouts, in Markdown. */
export function renderMarkdownReport(doc: RunSummaryDoc): string {
  const header = doc.layout === 'grid' ? gridHeader(doc.context) : sweepHeader(doc.context);
  const table = doc.layout === 'grid' ? gridTable(doc.stages) : sweepTable(doc.stages, sloTarget(doc));
  const foot = runNoteLines(doc);
  const answer = doc.capacity ? `\n**${doc.capacity.verdict}**\n` : '';
  return `${header}\n\n${renderMarkdown(table)}\n${answer}${foot.length ? `\n${foot.map((l) => `- ${l}`).join('\n')}\n` : ''}`;
}

function sloTarget(doc: RunSummaryDoc): { capacity?: CapacityResult } {
  return doc.capacity ? { capacity: doc.capacity } : {};
}

/** The line above a terminal table: what was measured, on what, with which workload. */
export function terminalHeader(doc: RunSummaryDoc, style: TerminalStyle = PLAIN): string {
  const c = doc.context;
  const hw = c.gpu ? ` · ${c.gpus ?? 1}× ${c.gpu}` : '';
  const engine = `${c.engine}${c.engineVersion ? ` ${c.engineVersion}` : ''}`;
  const work =
    doc.layout === 'grid'
      ? doc.workload
      : c.promptTokens !== undefined
        ? `prompt_tokens=${c.promptTokens}, generated_tokens=${c.outputTokens ?? '?'}`
        : (c.lengths ?? doc.workload);
  const tag = c.predicted ? ' — predicted by the simulator' : '';
  return `${style.bold(c.model)}${c.quant ? ` (${c.quant})` : ''}${hw} · ${engine}${c.label ? ` · ${c.label}` : ''}${work ? ` · ${work}` : ''}${tag}`;
}

/**
 * What `run`, `predict` and `report` print: a compact table (`--columns` picks; see columns.ts), no Markdown
 * markup, bold only where `style` draws it (a TTY without NO_COLOR). table.md keeps the full seed layout.
 */
export function renderTerminalReport(doc: RunSummaryDoc, opts: { columns?: readonly string[]; style?: TerminalStyle } = {}): string {
  const style = opts.style ?? PLAIN;
  const ctx = { layout: doc.layout, ...(doc.capacity ? { capacity: doc.capacity } : {}) };
  const columns = resolveColumns(opts.columns, doc.layout, doc.stages);
  const rows = reportRows(doc.layout, doc.stages);
  const ids = doc.layout === 'grid' ? ['Input', 'Output'] : ['Benchmark'];
  const table = {
    headers: [...ids, ...columns.map((c) => c.header(ctx))],
    rows: rows.map((r) => [
      ...(doc.layout === 'grid' ? [String(r.input), String(r.output)] : [r.throughput ? rowMarks(r.throughput) : r.label]),
      ...columns.map((c) => c.cell(r, ctx)),
    ]),
  };
  const foot = runNoteLines(doc).map((l) => `- ${fromMarkdown(l, style)}`);
  // Percentile columns asked for on a grid (whose notes never mark any) still need their † explained.
  if (table.rows.some((r) => r.some((c) => c.endsWith(' †'))) && !foot.some((l) => l.startsWith('- †'))) {
    foot.push(`- † percentile from fewer than ${MIN_PERCENTILE_SAMPLES} samples`);
  }
  const answer = doc.capacity ? `\n${style.bold(doc.capacity.verdict)}\n` : '';
  return `${terminalHeader(doc, style)}\n\n${renderTerminalTable(table, ids.length)}\n${answer}${foot.length ? `\n${foot.join('\n')}\n` : ''}`;
}

/** table.csv: numeric, one number per cell, units in the headers (csv-numeric.ts). */
export function renderCsvReport(doc: RunSummaryDoc): string {
  return renderNumericCsv(doc.layout, doc.stages, doc.capacity);
}
