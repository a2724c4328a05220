import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { RunOptions } from '../config/run-options.js';
import { configError } from '../core/errors.js';
import type { RequestRecord } from '../metrics/record.js';
import type { StageSummary } from '../metrics/summary.js';
import { describeWriteFailure, writeFailureError } from '../store/write-errors.js';

export interface ResumeState {
  dir: string;
  createdAt: string;
  /** Rows finished before the interruption. */
  stages: StageSummary[];
  nextRequestId: number;
  /** Requests the kept rows sent: where a dataset or trace workload continues. */
  requestsSent: number;
  /** The original options with what the user may change on resume (key, output style) taken from now. */
  options(now: RunOptions): RunOptions;
}

/**
 * Prepare `--resume DIR`: keep the rows that finished, drop the records of the row that did not (it runs
 * again from its start with the same seed), and continue the request numbering.
 */
export function loadResumeState(dirArg: string): ResumeState {
  const dir = resolve(dirArg);
  const manifestPath = join(dir, 'manifest.json');
  if (!existsSync(manifestPath)) throw configError(`--resume ${dirArg}: no manifest.json there`, 'give the folder of a run started by inferbench run');
  const manifest = readJson(manifestPath) as { command?: string; createdAt?: string; options?: RunOptions };
  if (manifest.command !== 'run' || !manifest.options) throw configError(`--resume ${dirArg}: ${manifestPath} is not from inferbench run`);
  const summaryPath = join(dir, 'summary.json');
  const summary = existsSync(summaryPath) ? (readJson(summaryPath) as { stages?: StageSummary[]; complete?: boolean; interrupted?: boolean }) : {};
  if (summary.complete === true) throw configError(`--resume ${dirArg}: that run already finished every row`, 'start a new run instead');
  const stages = (summary.stages ?? []).filter((s) => !s.interrupted);

  const requestsPath = join(dir, 'requests.jsonl');
  const kept: string[] = [];
  let nextRequestId = 0;
  if (existsSync(requestsPath)) {
    for (const line of readFileSync(requestsPath, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      let rec: RequestRecord;
      try {
        rec = JSON.parse(line) as RequestRecord;
      } catch {
        continue; // a line cut by the crash
      }
      if (rec.stage < stages.length) {
        kept.push(line);
        nextRequestId = Math.max(nextRequestId, rec.id + 1);
      }
    }
    try {
      writeFileSync(requestsPath, kept.length ? `${kept.join('\n')}\n` : '');
    } catch (err) {
      throw writeFailureError(describeWriteFailure(requestsPath, err));
    }
  }
  const original = manifest.options;
  return {
    dir,
    createdAt: manifest.createdAt ?? new Date().toISOString(),
    stages,
    nextRequestId,
    requestsSent: kept.length,
    options: (now) => ({
      ...original,
      // JSON has no Infinity: a `--rate inf` row was saved as null.
      ...(original.rates ? { rates: original.rates.map((r) => (r === null ? Number.POSITIVE_INFINITY : r)) } : {}),
      out: dir,
      resume: dirArg,
      json: now.json,
      progress: now.progress,
      formats: now.formats,
      ...(now.apiKey ? { apiKey: now.apiKey } : { apiKey: undefined }),
    }),
  };
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw configError(`cannot read ${path}: ${(err as Error).message}`);
  }
}
