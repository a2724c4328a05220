import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { configError } from '../core/errors.js';
import type { RunSummaryDoc } from '../results/run-summary.js';
import { findRunDirs, runNameOf } from './nested-runs.js';
import { holderText, liveHolder, type LockHolder } from './run-lock.js';
import { firstIssue, manifestSchema, summarySchema, SUPPORTED_SCHEMA_VERSION, type ParsedManifest } from './schema.js';

export const DEFAULT_RESULTS_DIR = 'inferbench-results';

/** A saved run folder, read and validated. */
export interface StoredRun {
  /** First 8 hex of sha256(name): stable as long as the folder keeps its name (and a cell's run, its matrix's). */
  id: string;
  /** The folder's name; a matrix cell's or verify candidate's run: `<matrix>/<cell>/run` (store/nested-runs.ts). */
  name: string;
  dir: string;
  summary: RunSummaryDoc;
  manifest?: ParsedManifest;
  schemaVersion: number;
  /** Things a reader should know (newer schema, unreadable manifest). */
  warnings: string[];
  /** A `run` still going (its process holds the folder: store/run-lock.ts), or one that stopped before its last row. */
  status?: RunStatus;
}

export type RunStatus = { state: 'in-progress'; holder: LockHolder } | { state: 'incomplete'; interrupted: boolean };

/** The line a report puts above a run's table when the run is not a finished one. */
export function runStatusLine(run: StoredRun): string | undefined {
  const rows = run.summary.stages.filter((s) => !s.interrupted).length;
  const finished = `${rows} row${rows === 1 ? '' : 's'}`;
  if (run.status?.state === 'in-progress') {
    return `In progress: the run is still going (${holderText(run.status.holder)}); the table holds the ${finished} finished so far — report it again when it has finished`;
  }
  if (run.status?.state === 'incomplete') {
    const how = run.status.interrupted ? 'was interrupted' : 'stopped (its process ended)';
    return `Incomplete: this run ${how} before its last row; the table holds the ${finished} it finished — \`inferbench run --resume ${run.dir}\` runs the rest`;
  }
  return undefined;
}

/** A run's id from its name (runNameOf: the folder's name for a top-level run, so existing ids never change). */
export function runIdOf(runName: string): string {
  return createHash('sha256').update(runName).digest('hex').slice(0, 8);
}

function readJson(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw configError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    const why = (err as Error).message.split('\n')[0] ?? 'bad JSON';
    throw configError(`${path} is not valid JSON (${why})`, 'the file is corrupt; re-create it with `inferbench run` or remove the folder');
  }
}

/** Reads one run folder; a corrupt summary.json is a one-line error. */
export function openRunDir(dir: string): StoredRun {
  const abs = resolve(dir);
  const summaryPath = join(abs, 'summary.json');
  const raw = readJson(summaryPath);
  const parsed = summarySchema.safeParse(raw);
  if (!parsed.success) {
    throw configError(`${summaryPath} is not an inferbench run summary (${firstIssue(parsed.error)})`, 'the file is corrupt or from another tool');
  }
  const warnings: string[] = [];
  const { schemaVersion, ...summary } = parsed.data;
  if (schemaVersion > SUPPORTED_SCHEMA_VERSION) {
    warnings.push(`summary.json has schema ${schemaVersion}, newer than this inferbench (${SUPPORTED_SCHEMA_VERSION}): fields it does not know are ignored`);
  }
  let manifest: ParsedManifest | undefined;
  const manifestPath = join(abs, 'manifest.json');
  if (existsSync(manifestPath)) {
    try {
      const m = manifestSchema.safeParse(readJson(manifestPath));
      if (m.success) manifest = m.data;
      else warnings.push(`manifest.json unreadable (${firstIssue(m.error)})`);
    } catch (err) {
      warnings.push((err as Error).message);
    }
  }
  const name = runNameOf(abs);
  const status = statusOf(abs, (raw as { complete?: unknown }).complete, summary.interrupted);
  return { id: runIdOf(name), name, dir: abs, summary, ...(manifest ? { manifest } : {}), schemaVersion, warnings, ...(status ? { status } : {}) };
}

/**
 * `run` writes summary.json with `complete: false` after each row and `complete: true` at its end (predictions,
 * imports and merges write no flag: they are whole). Not complete and held by a live process: in progress.
 */
function statusOf(dir: string, complete: unknown, interrupted: boolean): RunStatus | undefined {
  if (complete !== false) return undefined;
  const holder = liveHolder(dir);
  return holder ? { state: 'in-progress', holder } : { state: 'incomplete', interrupted };
}

export interface ListedRun {
  id: string;
  name: string;
  dir: string;
  run?: StoredRun;
  /** Set when the folder has a summary.json that could not be read. */
  error?: string;
}

/** Every folder directly under `root` that holds a summary.json, and the cells' runs of its matrices, oldest first. */
export function listRuns(root: string): ListedRun[] {
  const out: ListedRun[] = [];
  for (const { dir, name } of findRunDirs(root)) {
    const base = { id: runIdOf(name), name, dir };
    try {
      out.push({ ...base, run: openRunDir(dir) });
    } catch (err) {
      out.push({ ...base, error: (err as Error).message });
    }
  }
  const created = (r: ListedRun): string => r.run?.summary.createdAt || r.run?.manifest?.createdAt || '';
  return out.sort((a, b) => created(a).localeCompare(created(b)) || a.name.localeCompare(b.name));
}

const isRunDir = (p: string): boolean => existsSync(join(p, 'summary.json')) && statSync(p).isDirectory();

/** A RUN argument: a run folder (path), a folder name under the results dir, a run id or a unique id prefix. */
export function resolveRun(ref: string, resultsDir: string): StoredRun {
  const asPath = resolve(ref);
  if (existsSync(asPath)) {
    if (isRunDir(asPath)) return openRunDir(asPath);
    if (basename(asPath) === 'summary.json') return openRunDir(join(asPath, '..'));
    if (statSync(asPath).isDirectory()) throw noSummary(ref, asPath);
  }
  const hint = `list run ids with \`inferbench ls${resultsDir === DEFAULT_RESULTS_DIR ? '' : ` --results ${resultsDir}`}\`, or pass a run folder path`;
  const runs = listRuns(resultsDir);
  const byName = runs.find((r) => r.name === ref);
  const lower = ref.toLowerCase();
  const byId = /^[0-9a-f]{4,8}$/.test(lower) ? runs.filter((r) => r.id.startsWith(lower)) : [];
  const hit = byName ?? (byId.length === 1 ? byId[0] : undefined);
  if (byId.length > 1 && !byName) {
    throw configError(`run id "${ref}" is ambiguous: ${byId.map((r) => `${r.id} (${r.name})`).join(', ')}`, 'give more characters of the id');
  }
  if (!hit) throw configError(`unknown run "${ref}" (not a run folder, nor a run id in ${resolve(resultsDir)})`, hint);
  if (hit.error !== undefined || !hit.run) throw configError(hit.error ?? `cannot read ${hit.dir}`);
  return hit.run;
}

/** A folder given as a run that has no summary.json: say that, and why it may be missing. */
function noSummary(ref: string, dir: string): Error {
  const holder = liveHolder(dir);
  if (holder) {
    return configError(`${ref} has no summary.json yet: that run is still in progress (${holderText(holder)}) and its first row has not finished`, 'report it once a row has finished (or when the run has)');
  }
  if (existsSync(join(dir, 'manifest.json'))) {
    return configError(
      `${ref} has no summary.json: that run stopped before its first row finished`,
      `continue it with \`inferbench run --resume ${ref}\`, or start a new run`,
    );
  }
  return configError(`${ref} has no summary.json: it is not an inferbench run folder`, 'pass a run folder (it holds summary.json) or a run id from `inferbench ls`');
}

export interface RunFilter {
  model?: string;
  engine?: string;
  gpu?: string;
  label?: string;
  since?: Date;
}

const has = (value: string | undefined, needle: string | undefined): boolean =>
  needle === undefined || (value ?? '').toLowerCase().includes(needle.toLowerCase());

export function matchesFilter(run: StoredRun, f: RunFilter): boolean {
  const { context, target, createdAt } = run.summary;
  if (!has(context.model, f.model)) return false;
  if (f.engine !== undefined && !has(context.engine, f.engine) && !has(target.engine, f.engine)) return false;
  if (!has(context.gpu, f.gpu)) return false;
  if (!has(context.label, f.label)) return false;
  if (f.since) {
    const t = Date.parse(createdAt || run.manifest?.createdAt || '');
    if (!(t >= f.since.getTime())) return false;
  }
  return true;
}
