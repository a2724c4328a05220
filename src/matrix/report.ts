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
import type { CellHeadline, CellResult, MatrixDoc } from './types.js';

const f = (v: number | null | undefined, digits: number): string => (v === null || v === undefined ? '—' : v.toFixed(digits));

function capacityCell(c: CellResult): string {
  const cap = c.headline?.capacity;
  if (!cap) return '—';
  if (cap.feasibleMax === null) return `none (${cap.unit})`;
  const digits = cap.unit === 'streams' ? 0 : 2;
  return `${cap.feasibleMax.toFixed(digits)} ${cap.unit}`;
}

/**
 * Which row of a cell's run its headline figures come from (headline.ts), said in the columns, in a Row column and
 * in a note, so they are not read as the cell's own table: in a grid that row is a burst (every prompt of a grid cell
 * at once, TTFT with the queue in it) while the grid table's TTFT and ITL are the one-at-a-time pass; a capacity
 * cell's is its busiest probe that met the SLO.
 */
export function headlineSource(doc: MatrixDoc): { tag: string; note: string } {
  const profiles = new Set(doc.cells.flatMap((c) => (c.headline ? [c.headline.profile] : [])));
  if (profiles.has('grid')) {
    return {
      tag: 'burst',
      note: "Req/s, output tok/s, TTFT p50 and ITL p50 (burst): each cell's burst with most req/s, where every prompt of that grid cell is sent at once, so TTFT includes the wait in the queue; the grid tables below give TTFT and ITL of the one-at-a-time pass.",
    };
  }
  if (profiles.has('capacity')) {
    return {
      tag: 'within SLO',
      note: "Req/s, output tok/s, TTFT p50 and ITL p50 (within SLO): each cell's busiest probe that met the SLO; a cell where none did shows its busiest probe, marked in Row.",
    };
  }
  return { tag: 'best row', note: "Req/s, output tok/s, TTFT p50 and ITL p50 (best row): all from each cell's row with most req/s (named in Row)." };
}

/** The row a cell's figures come from; a grid's throughput rows are its bursts. */
function rowCell(h: CellHeadline | null): string {
  if (!h?.row) return '—';
  const row = h.profile === 'grid' ? `${h.row} burst` : h.row;
  return h.withinSlo === false ? `${row} (missed the SLO)` : row;
}

/** One row per cell, in matrix order. */
export function cellsTable(doc: MatrixDoc): Table {
  const withCapacity = doc.cells.some((c) => c.headline?.capacity);
  // matrix.json files written before headlines named their row have no Row to show.
  const withRow = doc.cells.some((c) => c.headline?.row !== undefined);
  const { tag } = headlineSource(doc);
  const headers = ['Cell', 'Status', 'Values', 'Start-up (s)', 'First request (ms)', ...(withRow ? ['Row'] : []), `Req/s (${tag})`, `Output tok/s (${tag})`, `TTFT p50 (ms, ${tag})`, `ITL p50 (ms, ${tag})`];
  if (withCapacity) headers.push('Capacity');
  const rows = doc.cells.map((c) => {
    const h = c.headline;
    const values = Object.entries(c.params).map(([k, v]) => `${k}=${v}`).join(' ') || (c.url !== undefined ? c.url : '—');
    const row = [c.name, c.status, values, f(c.startupSeconds, 1), f(c.firstRequestMs, 0), ...(withRow ? [rowCell(h)] : []), f(h?.requestThroughput, 2), f(h?.outputTokenThroughput, 1), f(h?.ttftMedianMs, 1), f(h?.itlMedianMs, 1)];
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
  const cells = { heading: '## Cells', table: cellsTable(doc), notes: [...failureLines(doc), headlineSource(doc).note] };
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
  if (doc.cells.some((c) => c.headline)) lines.push(`- ${headlineSource(doc).note}`);
  lines.push('- Start-up: spawn → ready (the server answers its health/model route and a one-token request); first request: that one-token request on the cold server.');
  if (doc.runArgs.length) lines.push(`- Every cell ran: \`inferbench run ${doc.runArgs.join(' ')}\` against its server.`);
  return `${lines.join('\n')}\n\n`;
}

function failureLines(doc: MatrixDoc): string[] {
  return doc.cells.filter((c) => c.error !== null).map((c) => `${c.name} (${c.status}): ${(c.error as string).split('\n')[0]}`);
}
