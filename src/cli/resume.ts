import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { RunOptions } from '../config/run-options.js';
import { configError } from '../core/errors.js';
import { resumePartIdBase } from '../load/benchmark.js';
import type { RequestRecord } from '../metrics/record.js';
import type { StageSummary } from '../metrics/summary.js';
import { describeWriteFailure, writeFailureError } from '../store/write-errors.js';

export interface ResumeState {
  dir: string;
  createdAt: string;
  /** Rows finished before the interruption. */
  stages: StageSummary[];
  nextRequestId: number;
  /** This part's id space (load/benchmark.ts resumePartIdBase): no id or synthetic prompt of an earlier part again. */
  idBase: number;
  /**
   * Where a dataset continues: after the requests of the kept rows and of every cut attempt (their records are
   * dropped, but the server saw those prompts).
   */
  requestsSent: number;
  /** The original options with what the user may change on resume (key, output style) taken from now. */
  options(now: RunOptions): RunOptions;
  /**
   * Before the part sends anything (not for --dry-run): notes it in manifest.json `resumes[]` and cuts the records
   * of unfinished rows from requests.jsonl.
   */
  begin(): void;
}

/** One `--resume` of a run, as manifest.json `resumes[]` keeps it (written before the part sends anything). */
export interface ResumePart {
  startedAt: string;
  /** 0-based index of the first row this part ran. */
  fromRow: number;
  /** Its request ids (and synthetic prompts) start here: resumePartIdBase(part). */
  idBase: number;
  /** Records of cut rows removed from requests.jsonl so far, this resume's included: a dataset skips their prompts. */
  droppedRequests: number;
}

/**
 * Prepare `--resume DIR`: keep the rows that finished, drop the records of the row that did not (it runs
 * again from its start), and give this part ids — and so prompts — that no earlier part sent: a server with a
 * prefix cache would answer the cut row's prompts from its cache. begin() notes the part in manifest.json, so the
 * same folder resumed again (this part cut too) moves on to the next id space; the same folder as it was gives
 * the same ids and prompts.
 */
export function loadResumeState(dirArg: string): ResumeState {
  const dir = resolve(dirArg);
  const manifestPath = join(dir, 'manifest.json');
  if (!existsSync(manifestPath)) throw configError(`--resume ${dirArg}: no manifest.json there`, 'give the folder of a run started by inferbench run');
  const manifest = readJson(manifestPath) as { command?: string; createdAt?: string; options?: RunOptions; resumes?: ResumePart[] };
  if (manifest.command !== 'run' || !manifest.options) throw configError(`--resume ${dirArg}: ${manifestPath} is not from inferbench run`);
  const summaryPath = join(dir, 'summary.json');
  const summary = existsSync(summaryPath) ? (readJson(summaryPath) as { stages?: StageSummary[]; complete?: boolean; interrupted?: boolean }) : {};
  if (summary.complete === true) throw configError(`--resume ${dirArg}: that run already finished every row`, 'start a new run instead');
  const stages = (summary.stages ?? []).filter((s) => !s.interrupted);

  const requestsPath = join(dir, 'requests.jsonl');
  const kept: string[] = [];
  let dropped = 0;
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
      } else dropped++;
    }
  }
  const earlier = Array.isArray(manifest.resumes) ? manifest.resumes : [];
  const part: ResumePart = {
    startedAt: new Date().toISOString(),
    fromRow: stages.length,
    idBase: resumePartIdBase(earlier.length + 1),
    droppedRequests: (earlier.at(-1)?.droppedRequests ?? 0) + dropped,
  };
  const original = manifest.options;
  return {
    dir,
    createdAt: manifest.createdAt ?? new Date().toISOString(),
    stages,
    nextRequestId,
    idBase: part.idBase,
    requestsSent: kept.length + part.droppedRequests,
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
    begin: () => {
      // The part first: were the trim to fail, the next --resume counts the dropped records again (a dataset then
      // skips a few prompts more), where the other order would forget them.
      writeJsonWhole(manifestPath, { ...manifest, resumes: [...earlier, part] });
      if (!existsSync(requestsPath)) return;
      try {
        writeFileSync(requestsPath, kept.length ? `${kept.join('\n')}\n` : '');
      } catch (err) {
        throw writeFailureError(describeWriteFailure(requestsPath, err));
      }
    },
  };
}

/** Through a temporary file and a rename, as the run writer does: a reader never sees half a manifest. */
function writeJsonWhole(path: string, value: unknown): void {
  try {
    writeFileSync(`${path}.tmp`, `${JSON.stringify(value, null, 2)}\n`);
    renameSync(`${path}.tmp`, path);
  } catch (err) {
    rmSync(`${path}.tmp`, { force: true });
    throw writeFailureError(describeWriteFailure(path, err));
  }
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw configError(`cannot read ${path}: ${(err as Error).message}`);
  }
}
