/**
 * The matrix's comparison: a table of the cells (status, start-up time, first request, headline figures), then the
 * cells' runs side by side exactly as `inferbench compare` prints them (report/bundles.ts: the seed layouts, the
 * verdict at matched load, with --slo capacity per cell, per GPU and per dollar). Written as matrix.md and
 * matrix.html (the HTML report with its charts), and printed.
 */
import { join } from 'node:path';
import { InferbenchError } from '../core/errors.js';
import { buildCompareBundle, buildReportBundle } from '../report/bundles.js';
import { mismatchText, runMismatches } from '../report/comparability.js';
import type { ReportBundle } from '../report/outputs.js';
import { renderMarkdown, type Table } from '../report/table.js';
import type { VerdictOptions } from '../report/verdict.js';
import { openRunDir, type StoredRun } from '../store/run-store.js';
import type { CellResult, MatrixDoc } from './types.js';

const f = (v: number | null | undefined, digits: number): string => (v === null || v === undefined ? '—' : v.toFixed(digits));

function capacityCell(c: CellResult): string {
  const cap = c.headline?.capacity;
  if (!cap) return '—';
  if (cap.feasibleMax === null) return `none (${cap.unit})`;
  const digits = cap.unit === 'streams' ? 0 : 2;
  return `${cap.feasibleMax.toFixed(digits)} ${cap.unit}`;
}

/** One row per cell, in matrix order. */
export function cellsTable(doc: MatrixDoc): Table {
  const withCapacity = doc.cells.some((c) => c.headline?.capacity);
  const headers = ['Cell', 'Status', 'Values', 'Start-up (s)', 'First request (ms)', 'Req/s (best row)', 'Output tok/s', 'TTFT p50 (ms)', 'ITL p50 (ms)'];
  if (withCapacity) headers.push('Capacity');
  const rows = doc.cells.map((c) => {
    const h = c.headline;
    const values = Object.entries(c.params).map(([k, v]) => `${k}=${v}`).join(' ') || (c.url !== undefined ? c.url : '—');
    const row = [c.name, c.status, values, f(c.startupSeconds, 1), f(c.firstRequestMs, 0), f(h?.requestThroughput, 2), f(h?.outputTokenThroughput, 1), f(h?.ttftMedianMs, 1), f(h?.itlMedianMs, 1)];
    if (withCapacity) row.push(capacityCell(c));
    return row;
  });
  return { headers, rows };
}

/** The ok cells' runs, named by their cell. */
export function openCellRuns(dir: string, doc: MatrixDoc): { runs: StoredRun[]; names: string[] } {
  const runs: StoredRun[] = [];
  const names: string[] = [];
  for (const c of doc.cells) {
    if (c.status !== 'ok' || c.runDir === null) continue;
    try {
      runs.push(openRunDir(join(dir, c.runDir)));
      names.push(c.name);
    } catch {
      // A run folder removed or damaged since: the cells table still lists the cell.
    }
  }
  return { runs, names };
}

export interface MatrixReport {
  markdown: string;
  /** The bundle to write matrix.html from (absent when no cell has a run). */
  bundle?: ReportBundle;
}

export function buildMatrixReport(dir: string, doc: MatrixDoc, opts: VerdictOptions, toolVersion: string): MatrixReport {
  const { runs } = openCellRuns(dir, doc);
  const head = matrixHeadMarkdown(doc);
  let bundle: ReportBundle | undefined;
  let note = '';
  if (runs.length >= 2) {
    // Cells of different engines may name one model differently; the comparison is still what the matrix is for.
    const mismatches = runMismatches(runs).map(mismatchText);
    try {
      bundle = buildCompareBundle(runs, { ...opts, ...(mismatches.length ? { mismatches } : {}) }, toolVersion);
    } catch (err) {
      if (!(err instanceof InferbenchError)) throw err;
      note = `No side-by-side comparison: ${err.message}.\n\n`;
      bundle = buildReportBundle(runs, toolVersion);
    }
  } else if (runs.length === 1) {
    bundle = buildReportBundle(runs, toolVersion);
  }
  const markdown = `${head}${note}${bundle ? bundle.markdown : 'No cell measured anything: nothing to compare.\n'}`;
  if (!bundle) return { markdown };
  const cells = { heading: '## Cells', table: cellsTable(doc), notes: failureLines(doc) };
  return {
    markdown,
    bundle: { ...bundle, file: 'matrix', title: `inferbench matrix — ${doc.cells.length} cells`, markdown, sections: [cells, ...bundle.sections] },
  };
}

/** The cells table and, under it, each failed cell's reason (first line). */
export function matrixHeadMarkdown(doc: MatrixDoc): string {
  const ok = doc.cells.filter((c) => c.status === 'ok').length;
  const state = doc.state === 'interrupted' ? ' — interrupted: `inferbench matrix --resume DIR` runs the cells not finished' : '';
  const lines = [`# inferbench matrix: ${ok} of ${doc.cells.length} cells measured${state}`, '', renderMarkdown(cellsTable(doc)), ''];
  for (const l of failureLines(doc)) lines.push(`- ${l}`);
  lines.push('- Start-up: spawn → ready (the server answers its health/model route and a one-token request); first request: that one-token request on the cold server.');
  if (doc.runArgs.length) lines.push(`- Every cell ran: \`inferbench run ${doc.runArgs.join(' ')}\` against its server.`);
  return `${lines.join('\n')}\n\n`;
}

function failureLines(doc: MatrixDoc): string[] {
  return doc.cells.filter((c) => c.error !== null).map((c) => `${c.name} (${c.status}): ${(c.error as string).split('\n')[0]}`);
}
