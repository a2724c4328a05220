/**
 * `inferbench merge`: shard folders (run --shard I/N) → one run folder, as if one process had sent every request.
 * Every row is recomputed from the union of the shards' records (recompute.ts: the same code a run's own rows come
 * from), each shard's stamps first moved onto shard 0's clock through the wall clocks the shards recorded.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { configError } from '../core/errors.js';
import type { WindowOutcome } from '../load/window.js';
import type { ClientHealth } from '../metrics/health.js';
import type { RequestRecord } from '../metrics/record.js';
import type { StageSummary } from '../metrics/summary.js';
import type { RunSummaryDoc } from '../results/run-summary.js';
import { walkMeasuredRecords } from '../store/requests-reader.js';
import type { MergedFrom } from './merge-types.js';
import { recomputeStage, recordedWindow, type RecomputeOptions } from './recompute.js';
import type { ShardInfo } from './shard-run.js';

export interface ShardFolder {
  dir: string;
  manifest: Record<string, unknown> & { options: RecomputeOptions & { records?: { kind: string } } };
  summary: RunSummaryDoc & { complete?: boolean };
  shard: ShardInfo;
  records: RequestRecord[];
}

const TIME_FIELDS = ['scheduledAtMs', 'sentAtMs', 'headersAtMs', 'firstTokenAtMs', 'lastTokenAtMs', 'endAtMs'] as const;

function readJson(path: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw configError(`cannot read ${what} ${path}: ${(err as Error).message}`, 'give the folders that inferbench run --shard wrote');
  }
}

/** Reads one shard's folder, refusing what merge cannot use (with which folder and why). */
export async function readShardFolder(dirArg: string): Promise<ShardFolder> {
  const dir = resolve(dirArg);
  if (!existsSync(join(dir, 'manifest.json'))) throw configError(`${dirArg}: no manifest.json there`, 'give the folders that inferbench run --shard I/N wrote');
  const manifest = readJson(join(dir, 'manifest.json'), 'the manifest') as ShardFolder['manifest'];
  if (!existsSync(join(dir, 'summary.json'))) throw configError(`${dirArg}: no summary.json — that shard never finished a row`, 'run that shard again');
  const summary = readJson(join(dir, 'summary.json'), 'the summary') as ShardFolder['summary'];
  if (!summary.shard || !manifest.options) {
    throw configError(`${dirArg} is not a shard (its run had no --shard I/N)`, 'merge joins the folders of one run started with --shard 0/N … --shard N-1/N');
  }
  const records: RequestRecord[] = [];
  const tally = await walkMeasuredRecords(dir, () => undefined, (line) => {
    const { schemaVersion: _v, ...rec } = line as unknown as RequestRecord & { schemaVersion?: number };
    records.push(rec);
  });
  if (tally.badLines > 0) throw configError(`${dirArg}/requests.jsonl has ${tally.badLines} line(s) that are not JSON (cut by a crash?)`, 'run that shard again');
  return { dir, manifest, summary, shard: summary.shard, records };
}

/** Checks the folders are every shard of one finished run, once each; throws the first problem. */
export function checkShards(folders: readonly ShardFolder[]): void {
  const first = folders[0];
  if (!first) throw configError('merge needs the folders of the shards', 'e.g. inferbench merge results/shard-0 results/shard-1 --out results/merged');
  const { count, runKey } = first.shard;
  const seen = new Map<number, string>();
  for (const f of folders) {
    const s = f.shard;
    if (s.runKey !== runKey || s.count !== count) {
      const why = s.seed !== first.shard.seed ? `seed ${s.seed} vs ${first.shard.seed}` : s.count !== count ? `${s.count} shards vs ${count}` : 'their flags differ';
      throw configError(`${f.dir} is shard ${s.index}/${s.count} of another run than ${first.dir} (${why})`, 'merge only the shards of one run: same flags, same seed');
    }
    const dup = seen.get(s.index);
    if (dup !== undefined) throw configError(`shard ${s.index}/${count} was given twice (${dup} and ${f.dir})`, 'give each shard folder once');
    seen.set(s.index, f.dir);
    if (f.summary.complete !== true) {
      const rows = f.summary.stages?.length ?? 0;
      throw configError(`shard ${s.index}/${count} (${f.dir}) is incomplete: it ${f.summary.interrupted ? 'was interrupted' : 'stopped'} after ${rows} row(s)`, 'run that shard again with the same flags, then merge');
    }
    if (f.manifest.options.records?.kind !== 'full') {
      throw configError(`shard ${s.index}/${count} (${f.dir}) kept only some requests (--records ${f.manifest.options.records?.kind})`, 'merge recomputes every figure from every request: run the shards with --records full');
    }
  }
  const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !seen.has(i));
  if (missing.length > 0) {
    throw configError(`shard${missing.length > 1 ? 's' : ''} ${missing.map((i) => `${i}/${count}`).join(', ')} missing`, `give the folders of all ${count} shards`);
  }
  const rows = first.summary.stages.length;
  const odd = folders.find((f) => f.summary.stages.length !== rows);
  if (odd) throw configError(`shard ${odd.shard.index}/${count} has ${odd.summary.stages.length} rows, shard ${first.shard.index}/${count} has ${rows}`, 'the shards did not run the same profile: run them again with the same flags');
}

export interface MergedRun {
  doc: RunSummaryDoc;
  /** Every shard's records on shard 0's clock, in the order of their completion (as one process writes them). */
  records: RequestRecord[];
}

/** Joins checked shard folders into one run: records on one clock, every row recomputed over the shards' common window. */
export function mergeShards(input: readonly ShardFolder[], outDir: string): MergedRun {
  checkShards(input);
  const folders = [...input].sort((a, b) => a.shard.index - b.shard.index);
  const base = folders[0] as ShardFolder;
  const shiftOf = (f: ShardFolder): number => f.shard.epochOriginMs - base.shard.epochOriginMs;
  const records: RequestRecord[] = [];
  for (const f of folders) {
    const d = shiftOf(f);
    for (const r of f.records) {
      const moved: RequestRecord = { ...r, shard: f.shard.index };
      for (const k of TIME_FIELDS) if (moved[k] !== undefined) moved[k] = (moved[k] as number) + d;
      records.push(moved);
    }
  }
  records.sort((a, b) => a.endAtMs - b.endAtMs || a.id - b.id);
  const options = base.manifest.options;
  let skew = 0;
  const notes = [...(base.summary.notes ?? [])];
  const stages: StageSummary[] = base.summary.stages.map((row, i) => {
    // A shard with no part in a row (one stream over three shards) ran it empty: its instants say nothing.
    const all = folders.map((f) => ({ row: f.summary.stages[i] as StageSummary, shift: shiftOf(f) }));
    const busy = all.filter((r) => r.row.requests.total + r.row.requests.warmup > 0);
    const rows = busy.length > 0 ? busy : all;
    const starts = rows.map((r) => (r.row.startedAtMs ?? 0) + r.shift);
    const ends = rows.map((r) => (r.row.endedAtMs ?? 0) + r.shift);
    skew = Math.max(skew, Math.max(...starts) - Math.min(...starts));
    const window = commonWindow(rows.map((r) => recordedWindow(r.row, r.shift)));
    if (window === null) notes.push(`${row.label}: the shards' measured windows do not overlap (they started too far apart): figures cover all of them`);
    const mine = records.filter((r) => r.stage === i);
    return recomputeStage(row, mine, window ?? undefined, { options, startedAtMs: Math.min(...starts), endedAtMs: Math.max(...ends) });
  });
  if (skew > 250) notes.push(`the shards started a row up to ${skew.toFixed(0)} ms apart: each row's figures cover the window in which every shard was measuring`);
  const merged: MergedFrom = {
    runKey: base.shard.runKey,
    shards: folders.map((f) => ({
      index: f.shard.index,
      dir: f.dir,
      requests: f.records.length,
      startedAt: f.shard.startedAt,
      ...(f.shard.startOffsetMs !== undefined ? { startOffsetMs: f.shard.startOffsetMs } : {}),
      clockShiftMs: shiftOf(f),
    })),
    rowStartSkewMs: skew,
  };
  const { shard: _shard, ...rest } = base.summary;
  const health = worstHealth(folders.map((f) => f.summary.health));
  const doc: RunSummaryDoc = {
    ...rest,
    runId: outDir.split(/[\\/]/).pop() ?? outDir,
    finishedAt: new Date().toISOString(),
    stages,
    merged,
    notes,
    outDir,
    interrupted: false,
    ...(health ? { health } : {}),
  };
  delete (doc as { complete?: boolean }).complete;
  return { doc, records };
}

/**
 * Steady rows: the window in which every shard was measuring (each opened its own as its part of the load settled).
 * undefined for batch rows (measured whole), null when the windows do not overlap.
 */
function commonWindow(windows: ReadonlyArray<WindowOutcome | undefined>): WindowOutcome | undefined | null {
  const steady = windows.filter((w): w is WindowOutcome => w !== undefined && w.openAtMs !== null && w.closeAtMs !== null);
  if (steady.length === 0) return undefined;
  const open = Math.max(...steady.map((w) => w.openAtMs as number));
  const close = Math.min(...steady.map((w) => w.closeAtMs as number));
  if (close <= open) return null;
  const out: WindowOutcome = { openAtMs: open, closeAtMs: close };
  if (steady.some((w) => w.unsettled)) out.unsettled = true;
  const stopped = steady.find((w) => w.stoppedEarly)?.stoppedEarly;
  if (stopped) out.stoppedEarly = stopped;
  const over = steady.find((w) => w.overSaturated)?.overSaturated;
  if (over) out.overSaturated = over;
  const caps = steady.filter((w) => w.capSearch);
  if (caps.length > 0) {
    out.capSearch = { cap: caps.reduce((n, w) => n + (w.capSearch?.cap ?? 0), 0), steps: caps[0]?.capSearch?.steps ?? [] };
    // Every shard kept its own share in flight: the row's load is their sum (the max an upper bound).
    if (caps.every((w) => w.capSearch?.measuredInFlight)) {
      const sum = (k: 'mean' | 'max'): number => caps.reduce((n, w) => n + (w.capSearch?.measuredInFlight?.[k] ?? 0), 0);
      out.capSearch.measuredInFlight = { mean: sum('mean'), max: sum('max') };
    }
  }
  return out;
}

/** The client's health over the shards: the worst of each figure (one slow shard is enough to doubt a row). */
function worstHealth(list: ReadonlyArray<ClientHealth | undefined>): ClientHealth | undefined {
  const hs = list.filter((h): h is ClientHealth => h !== undefined);
  if (hs.length === 0) return undefined;
  const max = (f: (h: ClientHealth) => number): number => Math.max(...hs.map(f));
  const warnings = hs.map((h, i) => (h.warning ? `shard ${i}: ${h.warning}` : undefined)).filter((w): w is string => w !== undefined);
  return {
    dispatchLagP99Ms: max((h) => h.dispatchLagP99Ms),
    connectWaitP99Ms: max((h) => h.connectWaitP99Ms ?? 0),
    eventLoopDelayP99Ms: max((h) => h.eventLoopDelayP99Ms),
    clientCpuShare: max((h) => h.clientCpuShare),
    clientLimited: hs.some((h) => h.clientLimited),
    // Shards that all counted their samples: the lag is no figure when none of them measured one.
    ...(hs.every((h) => h.dispatchLagSamples !== undefined) ? { dispatchLagSamples: hs.reduce((n, h) => n + (h.dispatchLagSamples as number), 0) } : {}),
    ...(warnings.length > 0 ? { warning: warnings.join('; ') } : {}),
  };
}
