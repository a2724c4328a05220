import { ApiFailure, getJson } from './api.js';
import type { MatrixRow, MatrixView } from './api-types.js';
import { fill, h, table } from './dom.js';

/** #/matrices: every matrix folder under the results directory (`inferbench matrix`). */
export function matricesPage(app: HTMLElement): () => void {
  fill(app, h('h1', null, 'Matrices'), h('p', { class: 'note' }, 'Loading…'));
  void getJson<MatrixRow[]>('/api/matrices').then(
    (rows) =>
      fill(
        app,
        h('h1', null, 'Matrices'),
        rows.length
          ? table(['Matrix', 'Created', 'State', 'Cells measured'], rows.map((r) => [h('a', { href: `#/matrix/${encodeURIComponent(r.name)}` }, r.name), r.createdAt, r.state, `${r.ok} of ${r.cells}`]), 'runs')
          : h('p', { class: 'empty' }, 'No matrix in this results directory: inferbench matrix --server-cmd … writes one.'),
      ),
    (err: unknown) => fill(app, h('p', { class: 'warn' }, err instanceof ApiFailure ? err.body.error : String(err))),
  );
  return () => undefined;
}

/** #/matrix/NAME: the cells table (status, start-up, headline figures), each failure's reason, and matrix.md. */
export function matrixPage(app: HTMLElement, name: string): () => void {
  fill(app, h('h1', null, name), h('p', { class: 'note' }, 'Loading…'));
  void getJson<MatrixView>(`/api/matrices/${encodeURIComponent(name)}`).then(
    (v) =>
      fill(
        app,
        h('h1', null, `Matrix ${v.name}`),
        h('p', { class: 'note' }, `state: ${v.state}`),
        table(v.table.headers, v.table.rows),
        v.lines.length ? h('ul', { class: 'notes' }, v.lines.map((l) => h('li', null, h('pre', null, l)))) : null,
        h('h2', null, 'Comparison (matrix.md)'),
        h('pre', null, v.markdown || 'matrix.md is written when the matrix ends.'),
      ),
    (err: unknown) => fill(app, h('p', { class: 'warn' }, err instanceof ApiFailure ? err.body.error : String(err))),
  );
  return () => undefined;
}
