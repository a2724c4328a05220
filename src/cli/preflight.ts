import { accessSync, constants, mkdirSync, rmdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { RunOptions } from '../config/run-options.js';
import { configError } from '../core/errors.js';

/**
 * Checks made before any work (before the built-in simulator starts or a request is sent), so that a typo in a
 * path costs one line and exit 2 rather than a stack trace after minutes of measuring.
 */

const WHY: Record<string, string> = {
  ENOTDIR: 'part of that path is a file, not a folder',
  EEXIST: 'a file of that name is in the way',
  EACCES: 'no permission to write there',
  EPERM: 'no permission to write there',
  EROFS: 'that file system is read-only',
  ENOENT: 'folders cannot be created there',
  ENOSPC: 'the disk is full',
};

/**
 * `dir` can hold output files: it is (or can be made) a folder we may write in. Proven by doing it: folders the
 * check had to create and its probe file are removed again, so a run that stops later leaves nothing behind.
 */
export function checkOutputDir(dir: string, flag: string): void {
  const abs = resolve(dir);
  let created: string[] = [];
  const probe = join(abs, `.inferbench-write-check-${process.pid}`);
  try {
    created = makeFoldersRetrying(abs);
    writeFileSync(probe, '');
    unlinkSync(probe);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    const why = WHY[code];
    const detail = why !== undefined ? `${why}, ${code}` : (err as Error).message;
    throw configError(`${flag} ${dir}: cannot write results there (${detail})`, `pass ${flag} with a folder you can write to`);
  } finally {
    // Only folders this check made, deepest first, and only while empty: another run may be writing beside ours.
    for (const dir of created.reverse()) {
      try {
        rmdirSync(dir);
      } catch {
        break;
      }
    }
  }
}

/** makeFolders, again when a folder on the way vanished meanwhile (another run's check removing its own). */
function makeFoldersRetrying(abs: string): string[] {
  for (let attempt = 0; ; attempt++) {
    try {
      return makeFolders(abs);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 4) throw err;
    }
  }
}

/**
 * mkdir -p that returns the folders it created, outermost first (one made meanwhile by another process is not
 * ours). Not `mkdirSync(…, { recursive: true })`: on Node 20 that never returns for a path under /proc (it
 * retries ENOENT forever).
 */
function makeFolders(abs: string): string[] {
  const missing: string[] = [];
  let existing = abs;
  let kind = pathKind(existing);
  while (kind === 'missing' && dirname(existing) !== existing) {
    missing.unshift(existing);
    existing = dirname(existing);
    kind = pathKind(existing);
  }
  if (kind === 'other') {
    throw Object.assign(new Error(`${existing} is not a folder`), { code: existing === abs ? 'EEXIST' : 'ENOTDIR' });
  }
  const made: string[] = [];
  for (const dir of missing) {
    try {
      mkdirSync(dir);
      made.push(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return made;
}

function pathKind(path: string): 'folder' | 'other' | 'missing' {
  try {
    return statSync(path).isDirectory() ? 'folder' : 'other';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'missing';
    throw err;
  }
}

/** `path` is a readable file (or, where `folderOk`, a folder). */
export function checkInputFile(path: string, flag: string, folderOk = false): void {
  let kind: 'file' | 'folder' | 'other';
  try {
    const st = statSync(path);
    kind = st.isFile() ? 'file' : st.isDirectory() ? 'folder' : 'other';
    accessSync(path, constants.R_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EACCES' || code === 'EPERM' ? 'no permission to read it' : code === 'ENOTDIR' ? 'part of that path is a file, not a folder' : (err as Error).message;
    throw configError(`${flag} ${path}: ${reason}`, `check the path given to ${flag}`);
  }
  if (kind === 'other' || (kind === 'folder' && !folderOk)) throw configError(`${flag} ${path}: not a file`, `give ${flag} a file`);
}

/** Every path `run` reads or writes, checked before the simulator starts. */
export function preflightRun(opts: RunOptions, defaultResultsDir: string): void {
  const w = opts.workload;
  if (w.data !== undefined) checkInputFile(w.data, '--data');
  if (w.trace !== undefined) checkInputFile(w.trace, '--trace');
  if (w.tokenizer !== undefined && !TOKENIZER_KEYWORDS.has(w.tokenizer)) checkInputFile(w.tokenizer, '--tokenizer', true);
  checkOutputDir(opts.out ?? defaultResultsDir, opts.out !== undefined ? '--out' : 'the results folder');
}

/** `--tokenizer` values that name a tokenizer rather than a file. */
export const TOKENIZER_KEYWORDS: ReadonlySet<string> = new Set(['server', 'approx']);
