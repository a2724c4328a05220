import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claimRunFolder, LOCK_FILE, liveHolder } from '../../src/store/run-lock.js';

const root = mkdtempSync(join(tmpdir(), 'inferbench-lock-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** /proc/PID/stat's start time (field 22), as the lock records it. */
const startTicks = (pid: number): string => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] as string;
};

describe('run folder lock', () => {
  it('a live holder keeps the folder; the same pid with another start time (a recycled pid) is stale and taken over', async () => {
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
    const pid = sleeper.pid as number;
    try {
      const dir = join(root, 'recycled');
      const lockAs = (ticks: string): void =>
        writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid, host: hostname(), startTicks: ticks, startedAt: '2026-11-28T00:00:00Z', command: 'run' }));
      mkdirSync(dir);
      lockAs(startTicks(pid));
      expect(liveHolder(dir)?.pid).toBe(pid);
      expect(() => claimRunFolder(dir, { flag: '--resume', shown: dir, command: 'run' })).toThrow(`--resume ${dir}: that run is still in progress (pid ${pid})`);

      lockAs('1'); // the pid is alive, but it is not the process that took the lock
      expect(liveHolder(dir)).toBeUndefined();
      const lock = claimRunFolder(dir, { flag: '--resume', shown: dir, command: 'run' });
      expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
      lock?.release();
      expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it('an unreadable lock is stale; a new run still needs an empty folder, and a refused claim leaves no folder behind', () => {
    const dir = join(root, 'garbage');
    claimRunFolder(dir, { flag: '--out', shown: dir, command: 'run' })?.release();
    expect(existsSync(dir)).toBe(false); // made for the claim, left empty: removed
    claimRunFolder(dir, { flag: '--out', shown: dir, command: 'run' });
    writeFileSync(join(dir, LOCK_FILE), 'not json');
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    expect(() => claimRunFolder(dir, { flag: '--out', shown: dir, command: 'run' })).toThrow(`--out ${dir} is not empty`);
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('mine');
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });
});
