/** The dashboard's matrices: matrix folders (src/matrix/) directly under the results directory, and one matrix's page. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configError } from '../core/errors.js';
import { isMatrixDir, readMatrixDoc } from '../matrix/matrix-file.js';
import { cellsTable } from '../matrix/report.js';
import type { MatrixRow, MatrixView } from './client/api-types.js';

export function listMatrices(root: string): MatrixRow[] {
  if (!existsSync(root)) return [];
  const rows: MatrixRow[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const dir = join(root, entry.name);
    if (!entry.isDirectory() || !isMatrixDir(dir)) continue;
    try {
      const doc = readMatrixDoc(dir);
      rows.push({ name: entry.name, createdAt: doc.createdAt.replace('T', ' ').slice(0, 16), state: doc.state, cells: doc.cells.length, ok: doc.cells.filter((c) => c.status === 'ok').length });
    } catch {
      // A matrix.json being written or damaged: left out of the list until it reads.
    }
  }
  return rows.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

export function matrixView(root: string, name: string): MatrixView {
  const dir = join(root, name);
  if (!/^[^/\\]+$/.test(name) || name === '..' || !isMatrixDir(dir)) throw configError(`no matrix named ${name} in ${root}`);
  const doc = readMatrixDoc(dir);
  const md = join(dir, 'matrix.md');
  return {
    name,
    state: doc.state,
    table: cellsTable(doc),
    lines: doc.cells.filter((c) => c.error !== null).map((c) => `${c.name} (${c.status}): ${c.error}`),
    markdown: existsSync(md) ? readFileSync(md, 'utf8') : '',
  };
}
