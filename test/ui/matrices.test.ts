import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newMatrixDoc, writeMatrixDoc } from '../../src/matrix/matrix-file.js';
import type { MatrixRow, MatrixView } from '../../src/ui/client/api-types.js';
import { startDashboard, type Dashboard } from '../../src/ui/server.js';

let root: string;
let dash: Dashboard;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ib-ui-matrix-'));
  const dir = join(root, '20261128-140000-matrix');
  mkdirSync(dir);
  const doc = newMatrixDoc(
    [
      { name: 'vllm', server: 'vllm', params: { gpus: '1' }, command: 'vllm serve M --port {port}' },
      { name: 'tgi', server: 'tgi', params: { gpus: '1' }, command: 'text-generation-launcher --port {port}' },
    ],
    ['--profile', 'constant'],
    { readyTimeoutSeconds: 900, stopTimeoutSeconds: 30 },
  );
  Object.assign(doc.cells[0] as object, { status: 'ok', startupSeconds: 41.5, firstRequestMs: 180 });
  Object.assign(doc.cells[1] as object, { status: 'failed-to-start', error: 'tgi: the server command exited with code 1 before it was ready' });
  doc.state = 'finished';
  writeMatrixDoc(dir, doc);
  writeFileSync(join(dir, 'matrix.md'), '# inferbench matrix: 1 of 2 cells measured\n');
  // A folder that is not a matrix is not listed.
  mkdirSync(join(root, 'other'));
  dash = await startDashboard({ resultsDir: root, port: 0 });
});

afterAll(async () => {
  await dash?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('dashboard: matrices', () => {
  it('lists the matrix folders and shows one: its cells table, failures and matrix.md', async () => {
    const list = (await (await fetch(new URL('/api/matrices', dash.url))).json()) as MatrixRow[];
    expect(list).toEqual([{ name: '20261128-140000-matrix', createdAt: expect.any(String), state: 'finished', cells: 2, ok: 1 }]);
    const view = (await (await fetch(new URL('/api/matrices/20261128-140000-matrix', dash.url))).json()) as MatrixView;
    expect(view.table.headers.slice(0, 5)).toEqual(['Cell', 'Status', 'Values', 'Start-up (s)', 'First request (ms)']);
    expect(view.table.rows.map((r) => r.slice(0, 5))).toEqual([
      ['vllm', 'ok', 'gpus=1', '41.5', '180'],
      ['tgi', 'failed-to-start', 'gpus=1', '—', '—'],
    ]);
    expect(view.lines).toEqual(['tgi (failed-to-start): tgi: the server command exited with code 1 before it was ready']);
    expect(view.markdown).toContain('1 of 2 cells measured');
    const missing = await fetch(new URL('/api/matrices/nope', dash.url));
    expect(missing.status).toBe(404);
  });
});
