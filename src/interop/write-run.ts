import { existsSync, rmSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { defaultRunDir } from '../store/run-writer.js';
import { writeRunFolder } from '../store/run-folder.js';
import { writeFailureError, type WriteFailure } from '../store/write-errors.js';
import type { ImportedRun } from './types.js';

export interface WriteImportOptions {
  /** The run folder itself (one input only). */
  out?: string;
  /** Parent of the default run folders. */
  resultsDir: string;
  label?: string;
  toolVersion: string;
  now?: Date;
}

/** The label a run gets when none is given: the tool and its version, which is what sets it apart in `compare`. */
export function defaultLabel(run: ImportedRun): string {
  return run.source.version === 'unknown' ? run.source.tool : `${run.source.tool} ${run.source.version}`;
}

/** A folder name not taken yet under the results dir: <time>-<tool>-<file name>, then -2, -3… */
function freshDir(run: ImportedRun, opts: WriteImportOptions): string {
  const stem = basename(run.source.file).replace(/\.(jsonl?|ya?ml)$/i, '');
  const tool = run.source.tool.split('-')[0] as string;
  const base = defaultRunDir(opts.resultsDir, stem.toLowerCase().includes(tool) ? stem : `${run.source.tool}-${stem}`, opts.now);
  let dir = base;
  for (let i = 2; existsSync(dir); i++) dir = `${base}-${i}`;
  return dir;
}

/**
 * Writes an imported run as a run folder the store reads like a measured one, through the store's one run-folder
 * writer: manifest.json (command `import`, `source`), summary.json (checked against the results schema before any
 * file is written: a problem there is a bug in an importer) and requests.jsonl when the file had per-request data.
 */
export function writeImportedRun(run: ImportedRun, opts: WriteImportOptions): { dir: string; name: string } {
  const dir = resolve(opts.out ?? freshDir(run, opts));
  const name = basename(dir);
  const now = (opts.now ?? new Date()).toISOString();
  const summary = {
    tool: { name: 'inferbench' as const, version: opts.toolVersion },
    runId: name,
    ...run.summary,
    createdAt: run.summary.createdAt || now,
    context: { ...run.summary.context, label: opts.label ?? defaultLabel(run) },
    outDir: dir,
  };
  // A failed write (a full disk) is caught as it happens; a half-written folder would read as a run, so it is removed
  // (only when this import made it) and the failure said in one line.
  const created = !existsSync(dir);
  let failure: WriteFailure | undefined;
  writeRunFolder(
    dir,
    {
      manifest: { tool: { name: 'inferbench', version: opts.toolVersion }, createdAt: now, node: process.version, command: 'import', source: run.source },
      summary,
      ...(run.records.length > 0 ? { records: run.records } : {}),
    },
    {
      onFailure: (f) => void (failure ??= f),
      ...(opts.out !== undefined
        ? { refuseNonEmpty: { flag: '--out', shown: opts.out, hint: 'pass a new folder for the imported run, or leave --out out to get one under the results folder' } }
        : {}),
    },
  );
  if (failure) {
    if (created) rmSync(dir, { recursive: true, force: true });
    throw writeFailureError({ ...failure, message: `${failure.message}: nothing was imported from ${run.source.file}${created ? ' (its partial folder was removed)' : ''}` });
  }
  return { dir, name };
}
