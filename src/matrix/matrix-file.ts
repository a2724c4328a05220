/** matrix.json: written whole after every cell (through a temporary file, so a crash never leaves half of it). */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configError } from '../core/errors.js';
import type { CellSpec, MatrixDoc } from './types.js';

export const MATRIX_FILE = 'matrix.json';

export function writeMatrixDoc(dir: string, doc: MatrixDoc): void {
  doc.updatedAt = new Date().toISOString();
  const path = join(dir, MATRIX_FILE);
  writeFileSync(`${path}.tmp`, `${JSON.stringify(doc, null, 2)}\n`);
  renameSync(`${path}.tmp`, path);
}

export function isMatrixDir(dir: string): boolean {
  return existsSync(join(dir, MATRIX_FILE));
}

export function readMatrixDoc(dir: string): MatrixDoc {
  const path = join(dir, MATRIX_FILE);
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'there is none' : err instanceof Error ? err.message : String(err);
    throw configError(`cannot read ${path}: ${why}`, 'give the folder of a matrix (the one holding matrix.json)');
  }
  const d = doc as Partial<MatrixDoc>;
  if (d.kind !== 'matrix' || !Array.isArray(d.cells)) throw configError(`${path} is not a matrix.json (no kind "matrix" and cells)`);
  return d as MatrixDoc;
}

/** A new matrix: every cell `skipped` (not run yet) until its turn. */
export function newMatrixDoc(cells: readonly CellSpec[], runArgs: readonly string[], o: { readyTimeoutSeconds: number; stopTimeoutSeconds: number; gpuHourPrice?: string }): MatrixDoc {
  const now = new Date().toISOString();
  return {
    schemaVersion: 1,
    kind: 'matrix',
    createdAt: now,
    updatedAt: now,
    state: 'running',
    runArgs: [...runArgs],
    readyTimeoutSeconds: o.readyTimeoutSeconds,
    stopTimeoutSeconds: o.stopTimeoutSeconds,
    ...(o.gpuHourPrice !== undefined ? { gpuHourPrice: o.gpuHourPrice } : {}),
    cells: cells.map((c) => ({ ...c, status: 'skipped', startupSeconds: null, firstRequestMs: null, runDir: null, error: null, headline: null, serverLog: null })),
  };
}
