import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { configError } from '../core/errors.js';
import type { ImportedRecord, RequestRecord } from '../results/record.js';
import { summaryFileSchema, type RunSummaryDoc } from '../results/run-summary.js';
import { RunWriter, SCHEMA_VERSION, type RunWriterOptions } from './run-writer.js';
import { firstIssue } from './schema.js';

/** manifest.json: how the run was made. `command` is the subcommand that made it (run, predict, merge, import). */
export interface RunManifest {
  command: string;
  tool?: { name: 'inferbench'; version: string };
  createdAt?: string;
  [field: string]: unknown;
}

/** Everything a finished run folder holds, as values (the store writes; report/ renders the tables it is given). */
export interface RunFolderContent {
  manifest: RunManifest;
  /** summary.json: checked against the results schema before any file is written. */
  summary: RunSummaryDoc;
  /** summary.json `complete` (what `run` and `merge` write); absent: not written (predictions and imports are whole). */
  complete?: boolean;
  /** requests.jsonl, one line per record in the order given; no file when absent. */
  records?: Iterable<RequestRecord | ImportedRecord>;
  /** Other whole files by name, written after summary.json: `table.md`, `table.csv` (report/ renders them). */
  files?: Readonly<Record<string, string>>;
}

export interface WriteRunFolderOptions extends RunWriterOptions {
  /** Refuse a folder that exists and is not empty, naming the flag that gave it (`--out`). */
  refuseNonEmpty?: { flag: string; shown: string; hint: string };
}

/**
 * The one writer of a whole run folder (predict, merge, import): manifest.json first, then requests.jsonl,
 * summary.json and the files. The summary is checked against the results schema first, so a folder the store cannot
 * read is never written. `run`, which streams its records, writes through a RunWriter and the same writeRunSummary.
 */
export function writeRunFolder(dir: string, content: RunFolderContent, opts: WriteRunFolderOptions = {}): { dir: string } {
  const { refuseNonEmpty, ...writerOptions } = opts;
  if (refuseNonEmpty && existsSync(dir) && readdirSync(dir).length > 0) {
    throw configError(`${refuseNonEmpty.flag} ${refuseNonEmpty.shown} is not empty`, refuseNonEmpty.hint);
  }
  assertReadableSummary(content.summary);
  const writer = new RunWriter(dir, undefined, writerOptions);
  writer.writeJson('manifest.json', content.manifest);
  writer.writeRecordsSync(content.records ?? []);
  // requests.jsonl was opened for appending: a run without records leaves none (as before this writer).
  if (content.records === undefined) removeEmptyRequests(writer.dir);
  writeRunSummary(writer, content);
  return { dir: writer.dir };
}

/**
 * summary.json (with `complete` when given) and the rendered files, into a run folder being written: after every row
 * and at the end of `run`, and at the end of writeRunFolder. Throws, before writing, when the summary is not what
 * the store reads (a bug in whoever built it).
 */
export function writeRunSummary(writer: RunWriter, content: Pick<RunFolderContent, 'summary' | 'complete' | 'files'>): void {
  const summary = content.complete === undefined ? content.summary : { ...content.summary, complete: content.complete };
  assertReadableSummary(summary);
  writer.writeJson('summary.json', summary);
  for (const [name, text] of Object.entries(content.files ?? {})) writer.writeText(name, text);
}

/** Throws when summary.json, written as JSON (NaN → null), is not what the store reads: a bug in whoever built it. */
export function assertReadableSummary(summary: RunSummaryDoc): void {
  const check = summaryFileSchema.safeParse(JSON.parse(JSON.stringify({ schemaVersion: SCHEMA_VERSION, ...summary })));
  if (!check.success) throw new Error(`the run summary does not match the results schema (${firstIssue(check.error)})`);
}

function removeEmptyRequests(dir: string): void {
  const path = join(dir, 'requests.jsonl');
  if (existsSync(path) && statSync(path).size === 0) rmSync(path);
}
