import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { configError } from '../core/errors.js';
import { describeWriteFailure, isFsError } from './write-errors.js';

/**
 * One run per folder. A run (or `--resume`) holds `.inferbench-run.lock` in its folder while its process is alive:
 * the lock names the process (pid, host, and on Linux its start time, so a recycled pid is not taken for it). It is
 * created atomically (a complete file hard-linked into place: link(2) fails when the name exists), removed when the
 * run ends — normally, on Ctrl-C, on an error, or at process exit — and a lock whose process is gone (kill -9, a
 * crash, a reboot) is stale: the next run or `--resume` takes it over. `report` reads it to say a run is in progress.
 */
export const LOCK_FILE = '.inferbench-run.lock';

/** Who holds a run folder. */
export interface LockHolder {
  pid: number;
  host: string;
  /** /proc/<pid>/stat's start time (clock ticks since boot), where there is a /proc. */
  startTicks?: string;
  startedAt: string;
  command: string;
}

/** A held run folder; `release()` removes the lock (and the folder, when the run made it and left it empty). */
export class RunLock {
  private released = false;
  private readonly onExit = (): void => this.release();

  constructor(
    readonly dir: string,
    private readonly text: string,
    private readonly madeFolders: readonly string[],
  ) {
    // A run that ends through process.exit (a second Ctrl-C) still leaves no lock behind.
    process.once('exit', this.onExit);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    process.off('exit', this.onExit);
    const path = join(this.dir, LOCK_FILE);
    // Only while it is still ours (a takeover may have replaced a lock left by a process taken for dead).
    if (readText(path) === this.text) rmSync(path, { force: true });
    removeEmpty(this.madeFolders);
  }
}

/** Folders made for a run, deepest first, while they are empty (a run that wrote nothing leaves nothing). */
function removeEmpty(made: readonly string[]): void {
  for (const dir of [...made].reverse()) {
    try {
      rmdirSync(dir);
    } catch {
      break; // not empty
    }
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function parseHolder(text: string | undefined): LockHolder | undefined {
  if (text === undefined) return undefined;
  try {
    const h = JSON.parse(text) as Partial<LockHolder>;
    if (typeof h.pid !== 'number' || typeof h.host !== 'string') return undefined;
    return { pid: h.pid, host: h.host, ...(typeof h.startTicks === 'string' ? { startTicks: h.startTicks } : {}), startedAt: String(h.startedAt ?? ''), command: String(h.command ?? 'run') };
  } catch {
    return undefined;
  }
}

/** Start time of a process in clock ticks since boot (field 22 of /proc/PID/stat); undefined without /proc. */
function startTicksOf(pid: number): string | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  // The command name (field 2) is in parentheses and may hold spaces: count fields after its closing one.
  const rest = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  return rest?.[19];
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // it exists, under another user
  }
}

/** Whether the holder's process still runs. On another host it cannot be checked: taken as alive. */
function holderAlive(h: LockHolder): boolean {
  if (h.host !== hostname()) return true;
  if (!processAlive(h.pid)) return false;
  const ticks = h.startTicks !== undefined ? startTicksOf(h.pid) : undefined;
  return ticks === undefined || ticks === h.startTicks;
}

/** The live process holding `dir`, if one does (this process's own lock does not count: it is reading its own run). */
export function liveHolder(dir: string): LockHolder | undefined {
  const h = parseHolder(readText(join(dir, LOCK_FILE)));
  if (!h || (h.pid === process.pid && h.host === hostname())) return undefined;
  return holderAlive(h) ? h : undefined;
}

/** "pid 1234" or "pid 1234 on host gpu-7". */
export function holderText(h: LockHolder): string {
  return `pid ${h.pid}${h.host !== hostname() ? ` on host ${h.host}` : ''}`;
}

/**
 * Takes `dir`'s lock: the RunLock, or the live holder that has it. A stale lock is moved aside under a name of this
 * process and dropped only when it is still the stale one read (two processes taking over the same stale lock:
 * one gets it, the other then finds the winner's live lock).
 */
function takeLock(dir: string, command: string, madeFolders: string[]): RunLock | LockHolder {
  const path = join(dir, LOCK_FILE);
  const ticks = startTicksOf(process.pid);
  const mine: LockHolder = { pid: process.pid, host: hostname(), ...(ticks !== undefined ? { startTicks: ticks } : {}), startedAt: new Date().toISOString(), command };
  const text = `${JSON.stringify(mine)}\n`;
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  try {
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        createExclusive(tmp, path, text);
        return new RunLock(dir, text, madeFolders);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const seen = readSettled(path);
      if (seen === undefined) continue; // removed meanwhile: try again
      const holder = parseHolder(seen);
      if (holder && holderAlive(holder)) return holder;
      const aside = `${path}.${process.pid}.stale`;
      try {
        renameSync(path, aside);
      } catch {
        continue; // another process moved it first
      }
      if (readText(aside) !== seen) {
        // What was moved is a lock taken meanwhile: put it back (unless yet another one is there) and look again.
        try {
          linkSync(aside, path);
        } catch {
          // a third lock is in place: it decides
        }
      }
      unlinkSync(aside);
    }
    throw configError(`cannot take ${path}: other processes keep replacing it`, 'start one run at a time in a folder');
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * Creates `path` holding `text`, failing with EEXIST when it exists: a hard link of a complete file where the file
 * system has hard links (a reader never sees it half-written), else O_EXCL.
 */
function createExclusive(tmp: string, path: string, text: string): void {
  try {
    linkSync(tmp, path);
  } catch (err) {
    if (!NO_LINKS.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
    writeFileSync(path, text, { flag: 'wx' });
  }
}
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/** The lock's text; one that does not parse yet may be an O_EXCL lock being written: read it again a few times. */
function readSettled(path: string): string | undefined {
  let text = readText(path);
  for (let i = 0; i < 5 && text !== undefined && !parseHolder(text); i++) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    text = readText(path);
  }
  return text;
}

/** mkdir -p that returns the folders it made, outermost first. */
function makeFolders(dir: string): string[] {
  const missing: string[] = [];
  for (let d = dir; !existsSync(d) && dirname(d) !== d; d = dirname(d)) missing.unshift(d);
  mkdirSync(dir, { recursive: true });
  return missing;
}

export interface ClaimHow {
  /** How the folder was named on the command line: `--out X`, `--resume X` or the results folder's default. */
  flag: '--out' | '--resume';
  shown: string;
  /** The command that will write there (recorded in the lock). */
  command: string;
}

/**
 * The run folder for a new run (`--out`) or a `--resume`: locked for this process, before anything is read or
 * written there. A new run needs an empty folder (one run per folder: records of two runs never mix), a resume a
 * folder no live process holds. One line and exit 2 otherwise, before any request. `--resume` of a missing folder
 * returns undefined (the resume itself says what is wrong).
 */
export function claimRunFolder(dir: string, how: ClaimHow): RunLock | undefined {
  if (how.flag === '--resume' && !existsSync(dir)) return undefined;
  let made: string[] = [];
  let got: RunLock | LockHolder;
  try {
    made = how.flag === '--resume' ? [] : makeFolders(dir);
    got = takeLock(dir, how.command, made);
  } catch (err) {
    if (!isFsError(err)) throw err;
    removeEmpty(made);
    const f = describeWriteFailure(join(dir, LOCK_FILE), err);
    throw configError(`${how.flag} ${how.shown}: ${f.message}`, f.todo);
  }
  if (!(got instanceof RunLock)) {
    removeEmpty(made);
    if (how.flag === '--resume') {
      throw configError(`--resume ${how.shown}: that run is still in progress (${holderText(got)})`, `wait for it to finish, or stop it first — Ctrl-C where it runs, or kill ${got.pid} — then resume it`);
    }
    throw configError(`--out ${how.shown}: a run is writing there now (${holderText(got)})`, 'give each run its own folder');
  }
  if (how.flag === '--out') {
    // Not counted: this lock (and another process's attempt at it), a starting run's write check (cli/preflight.ts).
    const others = readdirSync(dir).filter((name) => !name.startsWith(LOCK_FILE) && !name.startsWith('.inferbench-write-check-'));
    if (others.length > 0) {
      got.release();
      throw configError(`--out ${how.shown} is not empty`, notEmptyHint(dir, how.shown));
    }
  }
  return got;
}

/** What to do about a non-empty --out: continue the run it holds, or use another folder. */
function notEmptyHint(dir: string, shown: string): string {
  const manifest = parseJson(readText(join(dir, 'manifest.json'))) as { command?: string } | undefined;
  if (!manifest) return 'give each run a new (or empty) folder';
  const summary = parseJson(readText(join(dir, 'summary.json'))) as { complete?: boolean } | undefined;
  // `run` marks a summary complete: false until its last row; predictions, imports and merges are whole.
  if (manifest.command !== 'run' || (summary !== undefined && summary.complete !== false)) return 'it holds a finished run: give the new run a new folder';
  return `it holds a run that stopped: continue it with \`inferbench run --resume ${shown}\`, or give the new run a new folder`;
}

function parseJson(text: string | undefined): unknown {
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The default folder (`inferbench-results/<time>-<label>`) for a run: a second run started in the same second with
 * the same label gets `<name>-2` (and so on) instead of a refusal.
 */
export function claimDefaultRunFolder(dir: string, command: string): { dir: string; lock: RunLock } {
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? dir : `${dir}-${n}`;
    try {
      const lock = claimRunFolder(candidate, { flag: '--out', shown: candidate, command });
      if (lock) return { dir: candidate, lock };
    } catch (err) {
      if (n >= 100) throw err;
    }
  }
}
