import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { configError } from '../core/errors.js';
import { rowCountText } from '../report/row-status.js';
import { seriesLabel } from '../report/series.js';
import { findRunDirs } from '../store/nested-runs.js';
import { openRunDir, runIdOf, type StoredRun } from '../store/run-store.js';
import type { RunRow } from './client/api-types.js';

/** A run folder as the dashboard holds it: the store's validated run, its raw manifest, its list row. */
export interface CatalogEntry {
  id: string;
  name: string;
  dir: string;
  run?: StoredRun;
  manifest: Record<string, unknown> | null;
  row: RunRow;
}

interface Cached {
  stamp: string;
  entry: CatalogEntry;
}

const when = (iso: string): string => (iso ? iso.replace('T', ' ').slice(0, 16) : '');

function readManifest(dir: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Which tool measured the run: an imported run's manifest names its source tool. */
export function toolOf(manifest: Record<string, unknown> | null, run?: StoredRun): string {
  const source = manifest?.['source'] as { tool?: unknown } | undefined;
  if (source && typeof source.tool === 'string' && source.tool) return source.tool;
  return run?.summary.tool.name ?? 'inferbench';
}

/** The row `inferbench ls` prints for a run, as data. */
export function runRow(run: StoredRun, manifest: Record<string, unknown> | null): RunRow {
  const c = run.summary.context;
  return {
    id: run.id,
    name: run.name,
    createdAt: when(run.summary.createdAt || (run.manifest?.createdAt ?? '')),
    layout: run.summary.layout,
    profile: run.summary.profile || run.summary.layout,
    model: c.model,
    engine: `${c.engine}${c.engineVersion ? ` ${c.engineVersion}` : ''}`,
    gpu: c.gpu ? `${c.gpus ?? 1}× ${c.gpu}` : '—',
    quant: c.quant ?? '—',
    rows: run.summary.stages.length,
    failedRows: run.summary.stages.filter((s) => s.requests.ok === 0).length,
    rowsText: rowCountText(run.summary.stages, { layout: run.summary.layout, ...(run.summary.interrupted ? { interrupted: true } : {}) }),
    label: c.label ?? '',
    tool: toolOf(manifest, run),
    predicted: c.predicted === true,
    series: seriesLabel(run),
  };
}

/**
 * The runs under one results folder, read with the run store (openRunDir validates every summary.json) and kept
 * until a folder's summary.json changes: a page load re-reads only what a run rewrote.
 */
export class RunCatalog {
  readonly root: string;
  private readonly cache = new Map<string, Cached>();

  constructor(root: string) {
    this.root = resolve(root);
  }

  /** Every run folder (matrix cells' runs too: store/nested-runs.ts), oldest first (as `ls`); unreadable ones carry their error. */
  list(): CatalogEntry[] {
    const seen = new Set<string>();
    const out: CatalogEntry[] = [];
    for (const { dir, name } of findRunDirs(this.root)) {
      const summary = join(dir, 'summary.json');
      let stamp: string;
      try {
        const st = statSync(summary);
        const m = existsSync(join(dir, 'manifest.json')) ? statSync(join(dir, 'manifest.json')).mtimeMs : 0;
        stamp = `${name}:${st.mtimeMs}:${st.size}:${m}`;
      } catch {
        continue;
      }
      seen.add(dir);
      const hit = this.cache.get(dir);
      if (hit && hit.stamp === stamp) {
        out.push(hit.entry);
        continue;
      }
      const entry = this.read(dir, name);
      this.cache.set(dir, { stamp, entry });
      out.push(entry);
    }
    for (const key of this.cache.keys()) if (!seen.has(key)) this.cache.delete(key);
    const created = (e: CatalogEntry): string => e.run?.summary.createdAt || e.run?.manifest?.createdAt || '';
    return out.sort((a, b) => created(a).localeCompare(created(b)) || a.name.localeCompare(b.name));
  }

  /** A run by id; an unknown or unreadable one is a one-line error (HTTP 404/400). */
  get(id: string): CatalogEntry & { run: StoredRun } {
    const entry = this.list().find((e) => e.id === id);
    if (!entry) throw configError(`no run with id ${id} in ${this.root}`, 'it may have been moved or deleted; reload the list');
    if (!entry.run) throw configError(entry.row.error ?? `cannot read ${entry.dir}`);
    return entry as CatalogEntry & { run: StoredRun };
  }

  /** A cheap signature of the folder: changes when a run appears, disappears or rewrites its summary. */
  signature(): string {
    const parts: string[] = [];
    for (const { dir, name } of findRunDirs(this.root)) {
      try {
        const st = statSync(join(dir, 'summary.json'));
        parts.push(`${name}:${st.mtimeMs}:${st.size}`);
      } catch {
        // gone since it was found
      }
    }
    return parts.sort().join('|');
  }

  private read(dir: string, name: string): CatalogEntry {
    const id = runIdOf(name);
    const manifest = readManifest(dir);
    try {
      const run = openRunDir(dir);
      return { id, name, dir, run, manifest, row: runRow(run, manifest) };
    } catch (err) {
      const error = (err as Error).message;
      const row: RunRow = {
        id, name, createdAt: '', layout: '', profile: '', model: '', engine: '', gpu: '', quant: '', rows: 0, failedRows: 0, rowsText: '', label: '',
        tool: toolOf(manifest), predicted: false, series: name, error,
      };
      return { id, name, dir, manifest, row };
    }
  }
}
