/**
 * Issue 51 item 5: every matrix cell and plan --verify candidate keeps its run in `<cell>/run`, and the run id was a
 * hash of the folder's name, so all of them had one id (acba2551) and `ls --results MATRIX` found "no runs". A nested
 * run is named by its path from its matrix (verify) folder, and the store lists the runs nested in those folders.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { lsCommand } from '../../src/cli/ls-command.js';
import { newMatrixDoc, writeMatrixDoc } from '../../src/matrix/matrix-file.js';
import { findRunDirs, runNameOf } from '../../src/store/nested-runs.js';
import { listRuns, openRunDir, resolveRun, runIdOf } from '../../src/store/run-store.js';

const root = mkdtempSync(join(tmpdir(), 'ib-nested-runs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The least summary.json the store reads: enough to list a run. */
function writeRun(dir: string, model: string, createdAt: string): string {
  mkdirSync(dir, { recursive: true });
  const doc = { schemaVersion: 1, createdAt, layout: 'sweep', profile: 'concurrent', context: { model, engine: 'vllm' }, stages: [] };
  writeFileSync(join(dir, 'summary.json'), JSON.stringify(doc));
  return dir;
}

function writeMatrix(dir: string, cells: string[]): void {
  mkdirSync(dir, { recursive: true });
  writeMatrixDoc(dir, newMatrixDoc(cells.map((name) => ({ name, server: name, params: {}, url: 'http://127.0.0.1:1' })), [], { readyTimeoutSeconds: 60, stopTimeoutSeconds: 5 }));
  cells.forEach((c, i) => writeRun(join(dir, c, 'run'), `m-${c}`, `2026-12-07T10:0${i}:00.000Z`));
}

const results = join(root, 'inferbench-results');
const matrix = join(results, 'mx2');
writeRun(join(results, '20261207-090000-sweep'), 'top', '2026-12-07T09:00:00.000Z');
writeMatrix(matrix, ['vllm_gpu=A100-80GB', 'vllm_gpu=L40S', 'sglang_gpu=A100-80GB']);
// plan --out plan-out --verify 2: the verify folder is plan-out/verify, one folder per candidate.
const verify = join(results, 'plan-out', 'verify');
writeRun(join(verify, '1-1x-A100-80GB-fp16-vllm', 'run'), 'v1', '2026-12-07T11:00:00.000Z');
writeRun(join(verify, '2-1x-A100-80GB-fp16-sglang', 'run'), 'v2', '2026-12-07T11:01:00.000Z');
writeFileSync(join(verify, 'verify.json'), JSON.stringify({ verifications: [], precisionPct: 10, interrupted: false, notes: [] }));

function ls(folder: string): { code: number; out: string; err: string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = lsCommand({ results: folder }, { stdout, stderr });
  return { code, out, err };
}

describe('runs nested in matrix and verify folders (issue 51 item 5)', () => {
  it('each cell run has a name and an id of its own; a top-level run keeps its folder name and id', () => {
    const runs = listRuns(results);
    expect(runs.map((r) => r.name)).toEqual([
      '20261207-090000-sweep',
      'mx2/vllm_gpu=A100-80GB/run',
      'mx2/vllm_gpu=L40S/run',
      'mx2/sglang_gpu=A100-80GB/run',
      'plan-out/verify/1-1x-A100-80GB-fp16-vllm/run',
      'plan-out/verify/2-1x-A100-80GB-fp16-sglang/run',
    ]);
    expect(new Set(runs.map((r) => r.id)).size).toBe(6);
    expect(runs.every((r) => r.error === undefined)).toBe(true);
    // An existing single run's id is what it always was: the hash of its folder's name.
    expect(runs[0]?.id).toBe(runIdOf('20261207-090000-sweep'));
    for (const r of runs) expect(r.id).toBe(runIdOf(r.name));
  });

  it('the id does not depend on how the run is reached: listed, opened by path, resolved by id', () => {
    const cell = join(matrix, 'vllm_gpu=L40S', 'run');
    const listed = listRuns(results).find((r) => r.dir === cell);
    const opened = openRunDir(cell);
    expect(opened.name).toBe('mx2/vllm_gpu=L40S/run');
    expect(opened.id).toBe(listed?.id);
    expect(listRuns(matrix).find((r) => r.dir === cell)?.id).toBe(opened.id);
    expect(resolveRun(opened.id, results).dir).toBe(cell);
    expect(resolveRun(opened.id.slice(0, 6), matrix).summary.context.model).toBe('m-vllm_gpu=L40S');
  });

  it('a folder named run outside a matrix or verify folder is an ordinary run, named as before', () => {
    const plain = writeRun(join(root, 'other', 'run'), 'plain', '2026-12-07T12:00:00.000Z');
    expect(runNameOf(plain)).toBe('run');
    expect(openRunDir(plain).id).toBe(runIdOf('run'));
    expect(findRunDirs(join(root, 'other')).map((r) => r.name)).toEqual(['run']);
  });

  it('`ls --results MATRIX` lists the cells\' runs, each with its id', () => {
    const r = ls(matrix);
    expect(r.code).toBe(0);
    expect(r.err).not.toContain('no runs');
    expect(r.err).toContain('3 runs in');
    for (const run of listRuns(matrix)) {
      expect(r.out).toContain(run.id);
      expect(r.out).toContain(run.name);
    }
    expect(ls(join(results, 'plan-out')).err).toContain('2 runs in');
  });
});
