import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliEntry, repoRoot } from '../helpers/cli.js';
import { FAST_RUN, FAST_SIM_FLAGS, mainInProcess } from '../helpers/cli-in-process-matrix-verify.js';
import { noServerLeft, readMatrix, simCmd } from './matrix-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'inferbench-matrix-int-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Starts the CLI and sends SIGINT once its output (stdout and stderr) has shown `when`. */
function interruptWhen(args: string[], when: RegExp): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...cliEntry, ...args], { cwd: repoRoot, env: { ...process.env, CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let sent = false;
    let all = '';
    const watch = (d: Buffer): void => {
      all += d.toString();
      if (!sent && when.test(all)) {
        sent = true;
        child.kill('SIGINT');
      }
    };
    child.stdout.on('data', watch);
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      watch(d);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe('inferbench matrix: Ctrl-C and --resume', () => {
  it('Ctrl-C in the second cell\'s run stops its server and keeps the first; --resume runs only the second', async () => {
    const out = join(tmp, 'm');
    // Ctrl-C is about the process: this matrix is the real CLI, signalled. Its cells are tiny (FAST_RUN); a's server runs
    // on a fast clock, b's on the catalog's, so that b's run lasts well past the line that sends the signal.
    const args = ['matrix', '--server-cmd', `a=${simCmd('vllm')} ${FAST_SIM_FLAGS}`, '--server-cmd', `b=${simCmd('sglang')}`, '--out', out, '--', ...FAST_RUN];
    const first = await interruptWhen(args, /running constant profile; results in \S*\/b\/run/);
    expect(first.code).toBe(130);
    expect(first.stderr).toContain('SIGINT: stopping the matrix');
    const doc = readMatrix(out);
    expect(doc.state).toBe('interrupted');
    expect(doc.cells.map((c) => [c.name, c.status])).toEqual([
      ['a', 'ok'],
      ['b', 'skipped'],
    ]);
    expect(doc.cells[1]?.error).toContain('interrupted during its run');
    expect(doc.cells[1]?.pid).toBeGreaterThan(0);
    expect(await noServerLeft(doc)).toEqual([]);
    expect(readFileSync(join(out, 'matrix.md'), 'utf8')).toContain('interrupted');
    const aSummary = join(out, 'a', 'run', 'summary.json');
    const aWritten = statSync(aSummary).mtimeMs;

    // --resume and what follows run in this process (the CLI's main, its output captured).
    const resumed = await mainInProcess(['matrix', '--resume', out]);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain('cell 1/1 b');
    expect(resumed.stderr).not.toContain('cell 1/1 a');
    const after = readMatrix(out);
    expect(after.state).toBe('finished');
    expect(after.cells.map((c) => [c.name, c.status])).toEqual([
      ['a', 'ok'],
      ['b', 'ok'],
    ]);
    expect(after.cells[1]?.engine).toBe('sglang');
    // The first cell's run was kept as it was.
    expect(statSync(aSummary).mtimeMs).toBe(aWritten);
    expect(resumed.stdout).toContain('2 of 2 cells measured');
    expect(await noServerLeft(after)).toEqual([]);

    const again = await mainInProcess(['matrix', '--resume', out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('is finished');
  });
});
