/**
 * Issue 51 items 5 and 8, in process (no CLI, no real measurement): the matrix loop with a measure that writes a
 * small run folder. Each cell's run has an id of its own, in matrix.html's runs and in the dashboard, which lists the
 * cells' runs of the matrices it serves; the cells table says which row its figures come from; a cell that fails to
 * start says why on the terminal.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newMatrixDoc } from '../../src/matrix/matrix-file.js';
import { cellsTable, matrixHeadMarkdown, openCellRuns } from '../../src/matrix/report.js';
import { runMatrix, type MeasureCell } from '../../src/matrix/run-matrix.js';
import type { CellHeadline, CellSpec, MatrixDoc } from '../../src/matrix/types.js';
import type { MatrixRow, RunRow } from '../../src/ui/client/api-types.js';
import { startDashboard } from '../../src/ui/server.js';
import { readMatrix } from './matrix-helpers.js';

const root = mkdtempSync(join(tmpdir(), 'ib-matrix-cell-runs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Writes the least summary.json the store reads, as the cell's run. */
const writeRunMeasure: MeasureCell = async (cell, _url, runDir) => {
  mkdirSync(runDir, { recursive: true });
  const doc = { schemaVersion: 1, createdAt: new Date().toISOString(), layout: 'sweep', profile: 'concurrent', context: { model: `m-${cell.name}`, engine: 'vllm', label: cell.name }, stages: [] };
  writeFileSync(join(runDir, 'summary.json'), JSON.stringify(doc));
  return { exitCode: 0, interrupted: false };
};

async function matrixOf(dir: string, cells: CellSpec[], measure: MeasureCell = writeRunMeasure): Promise<{ doc: MatrixDoc; said: string[] }> {
  mkdirSync(dir, { recursive: true });
  const said: string[] = [];
  const doc = newMatrixDoc(cells, ['--profile', 'concurrent'], { readyTimeoutSeconds: 10, stopTimeoutSeconds: 2 });
  await runMatrix({ dir, doc, measure, say: (l) => void said.push(l), signal: new AbortController().signal });
  return { doc, said };
}

const results = join(root, 'inferbench-results');
const matrixDir = join(results, '20261207-100000-matrix');
const urlCell = (name: string): CellSpec => ({ name, server: name, params: {}, url: 'http://127.0.0.1:1' });

beforeAll(async () => {
  await matrixOf(matrixDir, [urlCell('vllm'), urlCell('tgi'), urlCell('sglang')]);
});

describe('matrix cells as runs (issue 51 item 5)', () => {
  it('each cell\'s run has its own id, so matrix.html lists them apart', () => {
    const cells = openCellRuns(matrixDir, readMatrix(matrixDir));
    expect(cells.names).toEqual(['vllm', 'tgi', 'sglang']);
    expect(cells.runs.map((r) => r.name)).toEqual(['20261207-100000-matrix/vllm/run', '20261207-100000-matrix/tgi/run', '20261207-100000-matrix/sglang/run']);
    expect(new Set(cells.runs.map((r) => r.id)).size).toBe(3);
  });

  it('the dashboard serving the results folder, or the matrix folder itself, lists the cells\' runs', async () => {
    for (const served of [results, matrixDir]) {
      const dash = await startDashboard({ resultsDir: served, port: 0 });
      try {
        const body = (await (await fetch(new URL('/api/runs', dash.url))).json()) as { runs: RunRow[] };
        expect(body.runs.map((r) => r.label).sort()).toEqual(['sglang', 'tgi', 'vllm']);
        expect(new Set(body.runs.map((r) => r.id)).size).toBe(3);
        const matrices = (await (await fetch(new URL('/api/matrices', dash.url))).json()) as MatrixRow[];
        expect(matrices.map((m) => [m.name, m.cells, m.ok])).toEqual([['20261207-100000-matrix', 3, 3]]);
        const view = await fetch(new URL('/api/matrices/20261207-100000-matrix', dash.url));
        expect(view.status).toBe(200);
      } finally {
        await dash.close();
      }
    }
  });
});

describe('the cells table says where its figures come from (issue 51 item 8)', () => {
  const headline = (profile: string, row: string | undefined, over: Partial<CellHeadline> = {}): CellHeadline => ({
    profile, rows: 4, requestThroughput: 15.51, outputTokenThroughput: 1984.9, ttftMedianMs: 331.7, itlMedianMs: 7.5, failedShare: 0, ...(row !== undefined ? { row } : {}), ...over,
  });
  const docWith = (...headlines: CellHeadline[]): MatrixDoc => {
    const doc = newMatrixDoc(headlines.map((_, i) => urlCell(`c${i}`)), [], { readyTimeoutSeconds: 1, stopTimeoutSeconds: 1 });
    headlines.forEach((h, i) => Object.assign(doc.cells[i] as object, { status: 'ok', headline: h }));
    return doc;
  };

  it('a grid matrix labels its figures as the burst\'s, apart from the grid table\'s one-at-a-time pass', () => {
    const doc = docWith(headline('grid', '128/128'));
    expect(cellsTable(doc).headers.slice(5)).toEqual(['Row', 'Req/s (burst)', 'Output tok/s (burst)', 'TTFT p50 (ms, burst)', 'ITL p50 (ms, burst)']);
    expect(cellsTable(doc).rows[0]?.slice(5)).toEqual(['128/128 burst', '15.51', '1984.9', '331.7', '7.5']);
    expect(matrixHeadMarkdown(doc)).toMatch(/TTFT includes the wait in the queue; the grid tables below give TTFT and ITL of the one-at-a-time pass/);
  });

  it('other profiles label every figure as the best row\'s and name it; a capacity cell\'s row is the busiest probe within the SLO', () => {
    const sweep = docWith(headline('concurrent', 'concurrent@8'));
    expect(cellsTable(sweep).headers.slice(5)).toEqual(['Row', 'Req/s (best row)', 'Output tok/s (best row)', 'TTFT p50 (ms, best row)', 'ITL p50 (ms, best row)']);
    expect(cellsTable(sweep).rows[0]?.[5]).toBe('concurrent@8');
    expect(matrixHeadMarkdown(sweep)).toContain("all from each cell's row with most req/s");
    const capacity = docWith(headline('capacity', 'probe@4', { withinSlo: true }), headline('capacity', 'probe@1', { withinSlo: false }));
    const table = cellsTable(capacity);
    expect(table.headers.slice(5, 7)).toEqual(['Row', 'Req/s (within SLO)']);
    expect(table.rows.map((r) => r[5])).toEqual(['probe@4', 'probe@1 (missed the SLO)']);
  });

  it('a matrix.json written before headlines named their row shows no Row column', () => {
    const old = docWith(headline('concurrent', undefined));
    expect(cellsTable(old).headers.slice(5)).toEqual(['Req/s (best row)', 'Output tok/s (best row)', 'TTFT p50 (ms, best row)', 'ITL p50 (ms, best row)']);
  });
});

describe('a cell that fails to start (issue 51 item 8)', () => {
  it('prints the server log\'s last lines on the terminal, not only its exit code', async () => {
    const failing: CellSpec = {
      name: 'nosuchengine',
      server: 'sim',
      params: {},
      command: 'echo "inferbench sim: starting on port {port}"; echo "error: unknown engine \\"nosuchengine\\" (known: vllm, sglang, tgi)" >&2; exit 2',
    };
    let measured = 0;
    const { doc, said } = await matrixOf(join(root, 'failing'), [failing], async () => {
      measured++;
      return { exitCode: 0, interrupted: false };
    });
    expect(measured).toBe(0);
    expect(doc.cells[0]?.status).toBe('failed-to-start');
    const text = said.join('\n');
    expect(text).toContain('nosuchengine: failed-to-start — nosuchengine: the server command exited with code 2 before it was ready');
    expect(text).toContain('error: unknown engine "nosuchengine" (known: vllm, sglang, tgi)');
    // The reason's lines come right under the cell's status line.
    const at = said.findIndex((l) => l.includes('failed-to-start'));
    expect(said.slice(at + 1).some((l) => /^ {2}.*unknown engine "nosuchengine"/.test(l))).toBe(true);
  });
});
