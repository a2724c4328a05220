import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { configError } from '../core/errors.js';
import { defaultRunDir, SCHEMA_VERSION, testDiskFullBudget } from '../store/run-writer.js';
import { describeWriteFailure, writeFailureError } from '../store/write-errors.js';
import { firstIssue, summarySchema } from '../store/schema.js';
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

const json = (value: object): string => `${JSON.stringify({ schemaVersion: SCHEMA_VERSION, ...value }, null, 2)}\n`;

/**
 * Writes an imported run as a run folder the store reads like a measured one: manifest.json (command
 * `import`, `source`), summary.json (checked against the store's schema before it is written) and
 * requests.jsonl when the file had per-request data.
 */
export function writeImportedRun(run: ImportedRun, opts: WriteImportOptions): { dir: string; name: string } {
  const dir = resolve(opts.out ?? freshDir(run, opts));
  if (opts.out !== undefined && existsSync(dir) && readdirSync(dir).length > 0) {
    throw configError(`--out ${opts.out} is not empty`, 'pass a new folder for the imported run, or leave --out out to get one under the results folder');
  }
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
  // The store must read what import writes: a schema problem here is a bug in an importer, said before any file exists.
  const check = summarySchema.safeParse(JSON.parse(json(summary)));
  if (!check.success) throw new Error(`import produced a summary the store cannot read (${firstIssue(check.error)})`);
  const files: Array<[string, string]> = [
    ['manifest.json', json({ tool: { name: 'inferbench', version: opts.toolVersion }, createdAt: now, node: process.version, command: 'import', source: run.source })],
    ['summary.json', json(summary)],
    ...(run.records.length > 0
      ? [['requests.jsonl', `${run.records.map((r) => `{"schemaVersion":${SCHEMA_VERSION},${JSON.stringify(r).slice(1)}`).join('\n')}\n`] as [string, string]]
      : []),
  ];
  const created = !existsSync(dir);
  let budget = testDiskFullBudget();
  let path = dir;
  try {
    mkdirSync(dir, { recursive: true });
    for (const [file, text] of files) {
      path = join(dir, file);
      // Test hook (INFERBENCH_TEST_DISK_FULL_AFTER): past its budget a write goes to /dev/full, a real ENOSPC.
      if (budget !== undefined && (budget -= Buffer.byteLength(text)) < 0) writeFileSync('/dev/full', text);
      writeFileSync(path, text);
    }
  } catch (err) {
    // A half-written folder would read as a run: remove it (only when this import made it), then say so in one line.
    if (created) rmSync(dir, { recursive: true, force: true });
    const failure = describeWriteFailure(path, err);
    throw writeFailureError({ ...failure, message: `${failure.message}: nothing was imported from ${run.source.file}${created ? ' (its partial folder was removed)' : ''}` });
  }
  return { dir, name };
}
