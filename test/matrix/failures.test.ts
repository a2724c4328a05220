import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FAST_RUN, FAST_SIM_FLAGS, mainInProcess } from '../helpers/cli-in-process-matrix-verify.js';
import { noServerLeft, readMatrix, simCmd, tinyCmd } from './matrix-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'inferbench-matrix-fail-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// The matrix runs in this process (the CLI's main, its output and exit code captured); its servers are real processes.
describe('inferbench matrix with cells that fail', () => {
  it('records a broken command, a never-ready server, a port collision and a mid-run crash, and measures the rest', async () => {
    // Something else holds this port: the cell pinned to it must not measure that process.
    const holder: Server = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const held = (holder.address() as { port: number }).port;
    const cells = {
      servers: { sim: `${simCmd('vllm')} ${FAST_SIM_FLAGS}` },
      cells: [
        { name: 'good', server: 'sim' },
        { name: 'broken', command: 'echo "error: no such model: llama-9000" >&2; exit 7' },
        { name: 'never-ready', command: tinyCmd('never-ready'), readyTimeout: '3s' },
        { name: 'collision', server: 'sim', port: held },
        { name: 'crash', command: tinyCmd('crash-after=4') },
      ],
    };
    const file = join(tmp, 'cells.json');
    writeFileSync(file, JSON.stringify(cells));
    const out = join(tmp, 'm');
    const res = await mainInProcess(['matrix', '--cells', file, '--stop-timeout', '2s', '--out', out, '--', ...FAST_RUN]);
    holder.close();
    expect(res.stderr).not.toMatch(/at .*\.js:\d+/);
    // Not every cell measured: exit 1, the matrix itself finished.
    expect(res.code).toBe(1);
    const doc = readMatrix(out);
    expect(doc.state).toBe('finished');
    const by = Object.fromEntries(doc.cells.map((c) => [c.name, c]));
    expect(doc.cells.map((c) => [c.name, c.status])).toEqual([
      ['good', 'ok'],
      ['broken', 'failed-to-start'],
      ['never-ready', 'not-ready'],
      ['collision', 'failed-to-start'],
      ['crash', 'run-failed'],
    ]);
    expect(by['good']?.headline?.requestThroughput).toBeGreaterThan(0);
    expect(by['broken']?.error).toContain('exited with code 7 before it was ready');
    expect(by['broken']?.error).toContain('error: no such model: llama-9000');
    expect(by['never-ready']?.error).toContain('not ready within 3 s');
    expect(by['never-ready']?.error).toContain('HTTP 503');
    expect(by['collision']?.error).toContain(`port ${held} is in use before the server started`);
    expect(by['crash']?.error).toContain('the server exited with code 3 during the run');
    expect(by['crash']?.error).toContain('crashing on generation 4');
    for (const c of [by['broken'], by['never-ready'], by['collision']]) expect(c?.startupSeconds).toBeNull();
    expect(by['crash']?.startupSeconds).toBeGreaterThan(0);
    // Each failure is in the comparison's cells table and listed with its reason.
    const md = readFileSync(join(out, 'matrix.md'), 'utf8');
    expect(md).toContain('1 of 5 cells measured');
    expect(md).toContain('- broken (failed-to-start): broken: the server command exited with code 7 before it was ready');
    expect(await noServerLeft(doc)).toEqual([]);
    expect(doc.cells.filter((c) => c.pid !== undefined).map((c) => c.name)).toEqual(['good', 'broken', 'never-ready', 'crash']);
  });

  it('bad matrix input is one line and exit 2', async () => {
    const res = await mainInProcess(['matrix', '--server-cmd', 'serve --port {prot}', '--out', join(tmp, 'x')]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('unknown placeholder {prot}');
    const refused = await mainInProcess(['matrix', '--server-cmd', 'serve --port {port}', '--out', join(tmp, 'y'), '--', '--target', 'http://127.0.0.1:1']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('run flag --target');
  });
});
