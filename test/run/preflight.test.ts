import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkInputFile, checkOutputDir } from '../../src/cli/preflight.js';
import { InferbenchError } from '../../src/core/errors.js';
import { runCli } from '../helpers/cli.js';

function expectOneLineError(stderr: string, pattern: RegExp): void {
  const lines = stderr.split('\n').filter((l) => l.startsWith('error:'));
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(stderr).not.toMatch(/\n\s+at /);
  expect(stderr).not.toMatch(/internal error/);
}

describe('paths are checked before any work', () => {
  let tmp: string;
  let file: string;
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'inferbench-preflight-'));
    file = join(tmp, 'a-file');
    writeFileSync(file, 'x');
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('checkOutputDir accepts a new nested folder and leaves nothing behind', () => {
    const dir = join(tmp, 'new', 'deeper');
    checkOutputDir(dir, '--out');
    expect(existsSync(join(tmp, 'new'))).toBe(false);
    mkdirSync(join(tmp, 'kept'));
    checkOutputDir(join(tmp, 'kept'), '--out');
    expect(readdirSync(join(tmp, 'kept'))).toEqual([]);
  });

  it('checkOutputDir never removes a folder another run is using: only empty folders it made itself', () => {
    // Runs started together under one new parent (test/report/capacity-html.test.ts's predicts) used to lose
    // their folder when one check removed the parent it had made, recursively, while another run was inside it.
    // Now a check removes only its own folders, deepest first, and only while empty.
    const shared = join(tmp, 'shared');
    const mine = join(shared, 'mine');
    checkOutputDir(mine, '--out');
    mkdirSync(join(shared, 'theirs'), { recursive: true });
    checkOutputDir(join(shared, 'later'), '--out');
    expect(readdirSync(shared)).toEqual(['theirs']);
    // Many checks at once under one new parent all succeed (each tolerates the others' folders).
    const parent = join(tmp, 'many');
    for (let i = 0; i < 20; i++) checkOutputDir(join(parent, `run-${i}`), '--out');
    expect(existsSync(parent)).toBe(false);
  });

  it('checkOutputDir refuses a path under a regular file, a file in the way, and /proc', () => {
    const message = (dir: string): string => {
      try {
        checkOutputDir(dir, '--out');
      } catch (err) {
        expect((err as InferbenchError).code).toBe('E_CONFIG');
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(message(join(file, 'sub'))).toMatch(/part of that path is a file, not a folder/);
    expect(message(file)).toMatch(/a file of that name is in the way/);
    // Node's own recursive mkdir never returns for this path: the check must not use it.
    if (existsSync('/proc/self')) expect(message('/proc/inferbench-x/y')).toMatch(/cannot write results there/);
  });

  it('checkInputFile names a missing file and a folder given for a file', () => {
    expect(() => checkInputFile(join(tmp, 'nope.jsonl'), '--data')).toThrow(/--data .*nope\.jsonl: no such file/);
    expect(() => checkInputFile(tmp, '--trace')).toThrow(/--trace .*: not a file/);
    expect(() => checkInputFile(tmp, '--tokenizer', true)).not.toThrow();
  });

  const runCases: Array<[string, () => string[], RegExp]> = [
    ['--out under a regular file', () => ['--out', join(file, 'run')], /--out .*a-file\/run: cannot write results there \(part of that path is a file/],
    ['--out in /proc', () => ['--out', '/proc/inferbench-x'], /--out \/proc\/inferbench-x: cannot write results there/],
    ['--data that does not exist', () => ['--data', join(tmp, 'missing.jsonl')], /--data .*missing\.jsonl: no such file/],
    ['--tokenizer file that does not exist', () => ['--tokenizer', join(tmp, 'tok', 'tokenizer.json')], /--tokenizer .*tokenizer\.json: no such file/],
    ['--trace that does not exist', () => ['--profile', 'replay', '--trace', join(tmp, 'trace.jsonl')], /--trace .*trace\.jsonl: no such file/],
  ];
  for (const [name, args, pattern] of runCases) {
    it(`run with ${name}: one line, exit 2, before the simulator starts`, async () => {
      const res = await runCli(['run', ...args(), '--no-progress'], { timeoutMs: 30_000 });
      expect(res.code).toBe(2);
      expectOneLineError(res.stderr, pattern);
      expect(res.stdout).not.toMatch(/target: built-in simulator/);
    });
  }

  it('report with --out under a regular file: one line, exit 2, before reading any run', async () => {
    const res = await runCli(['report', join(tmp, 'no-such-run'), '--out', join(file, 'r')], { timeoutMs: 30_000 });
    expect(res.code).toBe(2);
    expectOneLineError(res.stderr, /--out .*a-file\/r: cannot write results there/);
  });

  it('report with --out in /proc: one line, exit 2', async () => {
    const res = await runCli(['report', join(tmp, 'no-such-run'), '--out', '/proc/inferbench-x'], { timeoutMs: 30_000 });
    expect(res.code).toBe(2);
    expectOneLineError(res.stderr, /--out \/proc\/inferbench-x: cannot write results there/);
  });
});
