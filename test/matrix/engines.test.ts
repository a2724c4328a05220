import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FAST_RUN, FAST_SIM_FLAGS, mainInProcess } from '../helpers/cli-in-process-matrix-verify.js';
import { noServerLeft, readMatrix, simCmd } from './matrix-helpers.js';

/**
 * The matrix runs in this process (the CLI's main, its output captured); each cell's server is a real `inferbench
 * sim` process started and stopped by the matrix, on a fast clock, measured by a tiny run (FAST_RUN).
 */
const sim = (engine: string): string => `${simCmd(engine)} ${FAST_SIM_FLAGS}`;

const tmp = mkdtempSync(join(tmpdir(), 'inferbench-matrix-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('inferbench matrix over two engines', () => {
  it('starts, measures and stops a simulated vLLM and TGI, records start-up times and prints the comparison', async () => {
    const out = join(tmp, 'm');
    const res = await mainInProcess(['matrix', '--server-cmd', `vllm=${sim('vllm')}`, '--server-cmd', `tgi=${sim('tgi')}`, '--out', out, '--', ...FAST_RUN]);
    expect(res.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(res.code).toBe(0);
    const doc = readMatrix(out);
    expect(doc.state).toBe('finished');
    expect(doc.runArgs).toEqual(FAST_RUN);
    expect(doc.cells.map((c) => [c.name, c.status, c.engine])).toEqual([
      ['vllm', 'ok', 'vllm'],
      ['tgi', 'ok', 'tgi'],
    ]);
    for (const c of doc.cells) {
      expect(c.startupSeconds).toBeGreaterThan(0);
      expect(c.firstRequestMs).toBeGreaterThan(0);
      expect(c.error).toBeNull();
      expect(c.runDir).toBe(`${c.name}/run`);
      // The cell's run is a run folder like any other, labelled with the cell's name.
      const summary = JSON.parse(readFileSync(join(out, c.runDir as string, 'summary.json'), 'utf8'));
      expect(summary.context.label).toBe(c.name);
      expect(summary.target.url).toBe(`http://127.0.0.1:${c.port}`);
      expect(c.headline?.rows).toBe(summary.stages.length);
      expect(c.headline?.profile).toBe('constant');
      expect(c.headline?.requestThroughput).toBeGreaterThan(0);
      expect(c.headline?.failedShare).toBe(0);
      expect(readFileSync(join(out, c.name, 'server.log'), 'utf8')).toContain('inferbench sim:');
    }
    // The comparison: the cells table with start-up times, then compare's side-by-side layouts and its verdict.
    expect(res.stdout).toContain('inferbench matrix: 2 of 2 cells measured');
    expect(res.stdout).toMatch(/Start-up \(s\)/);
    expect(res.stdout).toContain('Verdict at matched load');
    const md = readFileSync(join(out, 'matrix.md'), 'utf8');
    expect(md).toContain('| vllm |');
    expect(md).toContain('Verdict at matched load');
    const html = readFileSync(join(out, 'matrix.html'), 'utf8');
    expect(html).toContain('inferbench matrix — 2 cells');
    expect(html).toContain('Start-up (s)');
    expect(await noServerLeft(doc)).toEqual([]);
  });

  it('--vary makes every combination a cell, filling the placeholders and the run context', async () => {
    const out = join(tmp, 'vary');
    // gpus is run metadata (the table's header) and a placeholder of the command alike.
    const cmd = `${sim('vllm')} --gpus {gpus} --max-num-seqs {seqs}`;
    const res = await mainInProcess(['matrix', '--server-cmd', cmd, '--vary', 'gpus=1,2', '--vary', 'seqs=64', '--out', out, '--', ...FAST_RUN, '--max-seconds', '0.3']);
    expect(res.code).toBe(0);
    const doc = readMatrix(out);
    expect(doc.cells.map((c) => [c.name, c.params, c.status])).toEqual([
      ['server_gpus=1_seqs=64', { gpus: '1', seqs: '64' }, 'ok'],
      ['server_gpus=2_seqs=64', { gpus: '2', seqs: '64' }, 'ok'],
    ]);
    const gpus = doc.cells.map((c) => JSON.parse(readFileSync(join(out, c.runDir as string, 'summary.json'), 'utf8')).context.gpus);
    expect(gpus).toEqual([1, 2]);
    expect(readFileSync(join(out, 'server_gpus=2_seqs=64', 'server.log'), 'utf8')).toMatch(/2× A100/);
    expect(await noServerLeft(doc)).toEqual([]);
  });
});
