import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEntry, repoRoot } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process-rows.js';
import { startFixedDelayServer, type FixedDelayServer } from '../helpers/openai-server.js';
import { readRunFolder } from '../helpers/run-folder.js';

// One run per folder (store/run-lock.ts) and a full disk mid-run (store/run-writer.ts), against a small real server.
// The live run is a real process (its pid is in the lock; it is stopped and killed); it is held still with SIGSTOP,
// so what is checked while it runs does not race it. Every other command goes through the CLI's own main in this
// process (test/helpers/main-in-process-rows.ts): the same exit codes, stdout and one-line errors.
const LOCK = '.inferbench-run.lock';
// Rows of 3 measured requests at 2 req/s: each lasts over a second (the margin the live-run checks rely on).
const ROWS = ['--profile', 'constant', '--rate', '2,2', '--max-requests', '3', '--prompt-tokens', '16', '--output-tokens', '8', '--tokenizer', 'approx', '--no-progress'];

const root = mkdtempSync(join(tmpdir(), 'inferbench-run-folder-'));
let server: FixedDelayServer;
beforeAll(async () => {
  server = await startFixedDelayServer({ ttftMs: 20, itlMs: 5, model: 'fixed-model' });
});
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});
const TINY = (): string[] => ['--target', server.url, ...ROWS];

/** Every file of a folder with a hash of its bytes: equal snapshots = the folder was left as it was. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) out[name] = createHash('sha256').update(readFileSync(join(dir, name))).digest('hex');
  return out;
}

function until(check: () => boolean, what: string, limitMs = 120_000): Promise<void> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const poll = setInterval(() => {
      if (check()) {
        clearInterval(poll);
        resolve();
      } else if (Date.now() - started > limitMs) {
        clearInterval(poll);
        reject(new Error(`gave up waiting for ${what}`));
      }
    }, 20);
  });
}

const rowsSaved = (dir: string): number => {
  try {
    return (JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as { stages: unknown[] }).stages.length;
  } catch {
    return 0;
  }
};

const exited = (child: ChildProcess): Promise<number | null> =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve(child.exitCode) : new Promise((r) => child.on('close', (code) => r(code)));

describe('one run per folder', () => {
  it('a live run holds its folder: a second run and --resume are refused, report says in progress; a killed run is taken over', async () => {
    const out = join(root, 'live');
    const first = spawn(process.execPath, [...cliEntry, 'run', ...TINY(), '--out', out], { cwd: repoRoot, stdio: 'ignore', env: { ...process.env, CI: 'true' } });
    const pid = first.pid as number;
    try {
      // Held before its first row: the lock is taken before the target is probed, a row is > 1 s after that.
      await until(() => existsSync(join(out, LOCK)), 'the run to take its folder');
      first.kill('SIGSTOP');
      expect(existsSync(join(out, 'summary.json'))).toBe(false);
      const early = await mainInProcess(['report', out, '--format', 'md', '--out', join(root, 'rep-early')]);
      expect(early.code).toBe(2);
      expect(early.stderr).toBe(`error: ${out} has no summary.json yet: that run is still in progress (pid ${pid}) and its first row has not finished (report it once a row has finished (or when the run has))\n`);

      first.kill('SIGCONT');
      await until(() => rowsSaved(out) >= 1, 'the first row');
      first.kill('SIGSTOP');
      const held = snapshot(out);

      const second = await mainInProcess(['run', ...TINY(), '--out', out]);
      expect(second.code).toBe(2);
      expect(second.stderr).toBe(`error: --out ${out}: a run is writing there now (pid ${pid}) (give each run its own folder)\n`);
      expect(second.stdout).toBe('');

      const resume = await mainInProcess(['run', '--resume', out]);
      expect(resume.code).toBe(2);
      expect(resume.stderr).toMatch(new RegExp(`^error: --resume ${out}: that run is still in progress \\(pid ${pid}\\)`));

      const reportDir = join(root, 'rep-live');
      const report = await mainInProcess(['report', out, '--format', 'md,html', '--out', reportDir]);
      expect(report.code).toBe(0);
      const inProgress = `In progress: the run is still going (pid ${pid}); the table holds the 1 row finished so far`;
      expect(report.stdout).toContain(`live: ${inProgress}`);
      expect(readFileSync(join(reportDir, 'report.md'), 'utf8')).toContain(`**live: ${inProgress}`);
      expect(readFileSync(join(reportDir, 'report.html'), 'utf8')).toContain(inProgress);
      // None of it touched the run's folder.
      expect(snapshot(out)).toEqual(held);

      // kill -9: the lock stays behind, stale.
      first.kill('SIGKILL');
      await exited(first);
      expect(existsSync(join(out, LOCK))).toBe(true);
      const stopped = await mainInProcess(['report', out, '--format', 'md', '--out', join(root, 'rep-stopped')]);
      expect(stopped.code).toBe(0);
      expect(stopped.stdout).toContain(`live: Incomplete: this run stopped (its process ended) before its last row; the table holds the 1 row it finished — \`inferbench run --resume ${out}\` runs the rest`);

      const resumed = await mainInProcess(['run', '--resume', out, '--no-progress']);
      expect(resumed.stderr).toBe('');
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toContain('resuming constant profile at row 2');
      const { doc, records } = readRunFolder(out);
      expect(doc.complete).toBe(true);
      expect(doc.stages).toHaveLength(2);
      expect(new Set(records.map((r) => r.id)).size).toBe(records.length);
      expect(existsSync(join(out, LOCK))).toBe(false);

      // One after the other: a finished run's folder is refused, and left as it was.
      const finished = snapshot(out);
      const third = await mainInProcess(['run', ...TINY(), '--out', out]);
      expect(third.code).toBe(2);
      expect(third.stderr).toBe(`error: --out ${out} is not empty (it holds a finished run: give the new run a new folder)\n`);
      expect(snapshot(out)).toEqual(finished);
    } finally {
      if (first.exitCode === null && first.signalCode === null) first.kill('SIGKILL');
    }
  }, 300_000);

  it('predict --out refuses a non-empty folder too', async () => {
    const out = join(root, 'predicted');
    const once = await mainInProcess(['predict', '--profile', 'constant', '--rate', '2', '--max-requests', '20', '--out', out]);
    expect(once.code).toBe(0);
    const before = snapshot(out);
    const again = await mainInProcess(['predict', '--profile', 'constant', '--rate', '2', '--max-requests', '20', '--out', out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toBe(`error: --out ${out} is not empty (it holds a finished run: give the new run a new folder)\n`);
    expect(snapshot(out)).toEqual(before);
  });
});

describe('a full disk during a run', () => {
  it('stops with one error line naming the file, prints the finished rows, keeps whole records, exit 1', async () => {
    const out = join(root, 'full');
    // The first row's records (2 req/s, 16/8 tokens: a few KB) fit; the second row's (100 req/s) fill the "disk".
    const res = await mainInProcess(['run', '--target', server.url, '--profile', 'constant', '--rate', '2,100', '--max-seconds', '1', '--prompt-tokens', '16', '--output-tokens', '8', '--tokenizer', 'approx', '--no-progress', '--out', out], {
      INFERBENCH_TEST_DISK_FULL_AFTER: '16000',
    });
    expect(res.code).toBe(1);
    const lines = res.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      `error: cannot write ${join(out, 'requests.jsonl')}: the disk is full (ENOSPC): the run stopped — summary.json keeps the 1 finished row, requests.jsonl whole records only; free some space (or give --out a folder on another disk), then continue it with \`inferbench run --resume ${out}\``,
    );
    expect(res.stdout).toMatch(/^\| asynchronous@2\.00 req\/sec +\| +\d/m);
    const text = readFileSync(join(out, 'requests.jsonl'), 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(16000);
    const records = text.trimEnd().split('\n').map((l) => JSON.parse(l) as { stage: number });
    expect(records.some((r) => r.stage === 1)).toBe(true);
    expect(rowsSaved(out)).toBe(1);
    expect(existsSync(join(out, LOCK))).toBe(false);
  }, 180_000);
});
