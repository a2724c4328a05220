/** The dashboard's matrices: matrix folders (src/matrix/) directly under the results directory (or it, when it is one), and one matrix's page. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { configError } from '../core/errors.js';
import { isMatrixDir, readMatrixDoc } from '../matrix/matrix-file.js';
import { cellsTable } from '../matrix/report.js';
import type { MatrixRow, MatrixView } from './client/api-types.js';

/** `inferbench ui --results MATRIX`: the folder served is itself a matrix, listed under its own name. */
function matrixDirs(root: string): { name: string; dir: string }[] {
  if (!existsSync(root)) return [];
  const own = isMatrixDir(root) ? [{ name: basename(root), dir: root }] : [];
  const under = readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && isMatrixDir(join(root, e.name)))
    .map((e) => ({ name: e.name, dir: join(root, e.name) }));
  return [...own, ...under];
}

export function listMatrices(root: string): MatrixRow[] {
  const rows: MatrixRow[] = [];
  for (const { name, dir } of matrixDirs(root)) {
    try {
      const doc = readMatrixDoc(dir);
      rows.push({ name, createdAt: doc.createdAt.replace('T', ' ').slice(0, 16), state: doc.state, cells: doc.cells.length, ok: doc.cells.filter((c) => c.status === 'ok').length });
    } catch {
      // A matrix.json being written or damaged: left out of the list until it reads.
    }
  }
  return rows.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

export function matrixView(root: string, name: string): MatrixView {
  const dir = /^[^/\\]+$/.test(name) && name !== '..' ? matrixDirs(root).find((m) => m.name === name)?.dir : undefined;
  if (dir === undefined) throw configError(`no matrix named ${name} in ${root}`);
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
