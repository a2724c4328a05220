/**
 * `inferbench import` on a full disk: one `error:` line naming the file, exit 1, no stack trace, and no half-written
 * run folder left behind (the store would read it as a run). The disk fills through the run writer's test hook,
 * INFERBENCH_TEST_DISK_FULL_AFTER=N (N bytes reach the folder, then writes go to /dev/full: a real ENOSPC).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { GUIDELLM } from './helpers.js';

const root = mkdtempSync(join(tmpdir(), 'ib-import-full-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('inferbench import on a full disk', () => {
  it.each([
    ['at the first file (manifest.json)', '0', 'manifest.json'],
    ['after manifest.json (requests.jsonl, written next by the one run-folder writer)', '400', 'requests.jsonl'],
  ])('%s: one line, exit 1, nothing left', async (_what, budget, file) => {
    const results = join(root, `results-${budget}`);
    const r = await runCli(['import', GUIDELLM, '--results', results], { env: { INFERBENCH_TEST_DISK_FULL_AFTER: budget } });
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^error: cannot write .*/${file.replace('.', '\\.')}: the disk is full \\(ENOSPC\\): nothing was imported from .*guidellm.*\\(its partial folder was removed\\) \\(free some space`));
    expect(r.stderr).not.toMatch(/\bat .*\.js:\d+|internal error/);
    expect(existsSync(results) ? readdirSync(results) : []).toEqual([]);
  });

  it('imports as usual when the disk has room', async () => {
    const results = join(root, 'results-ok');
    const r = await runCli(['import', GUIDELLM, '--results', results]);
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(results)).toHaveLength(1);
  });
});
