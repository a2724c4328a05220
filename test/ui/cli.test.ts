import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { runIdOf } from '../../src/store/run-store.js';
import type { LiveRun, RunView } from '../../src/ui/client/api-types.js';
import { MARKER_FILE } from '../../src/ui/marker.js';
import { spawnCli } from './spawn-cli.js';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'ib-ui-cli-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('inferbench ui: user mistakes are one line and exit 2', () => {
  it('a results folder that is not there', async () => {
    const r = await runCli(['ui', '--results', join(root, 'nope')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^error: no results folder at .*nope \(start a run first \(`inferbench run --ui` shows it live\), or pass --results DIR\)/);
  });

  it('a results path that is a file, a bad port, a port in use', async () => {
    const file = join(root, 'file');
    writeFileSync(file, '');
    const r1 = await runCli(['ui', '--results', file]);
    expect(r1.code).toBe(2);
    expect(r1.stderr).toMatch(/^error: --results .* is a file, not a folder/);
    const r2 = await runCli(['ui', '--results', root, '--port', 'http']);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/^error: --port "http" is not a port number/);
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as { port: number }).port;
    const r3 = await runCli(['ui', '--results', root, '--port', String(port)]);
    busy.close();
    expect(r3.code).toBe(2);
    expect(r3.stderr.trim()).toBe(`error: port ${port} on 127.0.0.1 is in use (pick another with --port, or --port 0 for any free port)`);
  });
});

describe('inferbench run --ui with no dashboard running', () => {
  it('starts one for the run, feeds it, keeps it up after the run until Ctrl-C, and never shows the api key', async () => {
    const results = join(root, 'results');
    const name = '20991231-000000-solo';
    const secret = 'sk-test-never-shown-42';
    const run = spawnCli([
      'run', '--ui', '--out', join(results, name), '--profile', 'constant', '--rate', '30', '--max-seconds', '1',
      '--prompt-tokens', '32', '--output-tokens', '8', '--tokenizer', 'approx', '--idle-wait', '0', '--api-key', secret,
    ]);
    try {
      const url = (await run.waitFor(/live: (http:\/\/127\.0\.0\.1:\d+\/)#\/run\/[0-9a-f]{8} \(dashboard started for this run\)/))[1] as string;
      // The first post may still be on its way when the line is printed.
      let live: LiveRun[] = [];
      for (let i = 0; i < 50 && live.length === 0; i++) {
        live = (await (await fetch(new URL('/api/live', url))).json()) as LiveRun[];
        if (live.length === 0) await new Promise((r) => setTimeout(r, 100));
      }
      expect(live.map((l) => l.name)).toEqual([name]);
      await run.waitFor(/the dashboard stays up at http:\/\/127\.0\.0\.1:\d+\/ — Ctrl-C to stop it/);
      const after = (await (await fetch(new URL('/api/live', url))).json()) as LiveRun[];
      expect(after[0]).toMatchObject({ status: 'finished', exitCode: 0, stagesDone: 1 });
      const viewText = await (await fetch(new URL(`/api/runs/${runIdOf(name)}`, url))).text();
      expect(viewText).not.toContain(secret);
      expect((JSON.parse(viewText) as RunView).command).toMatch(/^inferbench run --ui --out .* --api-key '<redacted>'$/);
      expect(readFileSync(join(results, name, 'manifest.json'), 'utf8')).not.toContain(secret);
      expect(existsSync(join(results, MARKER_FILE))).toBe(true);
      // Ctrl-C: the run's own exit code, and the dashboard goes with it.
      expect(await run.stop('SIGINT')).toBe(0);
      await expect(fetch(new URL('/api/live', url))).rejects.toThrow();
      for (let i = 0; i < 50 && existsSync(join(results, MARKER_FILE)); i++) await new Promise((r) => setTimeout(r, 100));
      expect(existsSync(join(results, MARKER_FILE))).toBe(false);
    } finally {
      await run.stop('SIGKILL');
    }
  });
});
