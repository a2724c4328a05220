/**
 * The observers of `inferbench run` (src/runplan/observer.ts): the server's telemetry, the progress lines, the
 * run folder's writer and a dashboard's live feed, in that order (the order the run has always updated them in).
 */
import { writeRunSummary } from '../store/run-folder.js';
import type { RunSummaryDoc } from '../results/run-summary.js';
import type { StageSummary } from '../metrics/summary.js';
import { attachServerTelemetry } from '../metrics/summary.js';
import { rowServerTelemetry } from '../metrics/server-gauges.js';
import type { RunObserver } from '../runplan/observer.js';
import type { RunWriter } from '../store/run-writer.js';
import type { TelemetrySampler } from '../transport/telemetry.js';
import type { LiveLink } from '../ui/live-setup.js';
import type { Workload } from '../workload/types.js';
import type { Progress } from './progress.js';

/** Server telemetry: samples tagged with the row, read at each row's edges, summarized onto each row. */
export function telemetryObserver(telemetry: TelemetrySampler, workload: Workload): RunObserver {
  return {
    ...(telemetry.hasGauges ? { onStageEdge: (i: number) => telemetry.markEdge(i) } : {}),
    onStageStart: (_spec, i) => telemetry.setStage(i),
    // The gauges over the whole row, and over its measured window (s.window), which the table shows.
    onStageEnd: (s) => attachServerTelemetry(s, rowServerTelemetry(telemetry.samplesOf(s.index), s.window), workload),
  };
}

/** The live progress line: counters bumped per request (plain increments), redrawn on its own timer. */
export function progressObserver(progress: Progress): RunObserver {
  const c = progress.counters;
  return {
    onDispatch: () => void c.dispatched++,
    onRecord: (r) => {
      c.done++;
      if (r.status !== 'ok') c.errors++;
    },
    onStageStart: (spec, i) => progress.stageStarted(spec, i),
    onStageEnd: (s) => progress.stageEnded(s),
  };
}

/**
 * requests.jsonl as requests end; summary.json after every finished row, so a crash loses at most the row in
 * progress (and --resume restarts it). A row is called finished only once its records are on the disk: a full disk
 * at its last flush leaves it out of summary.json, so --resume runs it again rather than keep it with records cut.
 * `done` holds the rows finished (a resumed run's earlier rows first).
 */
export function runWriterObserver(writer: RunWriter, done: StageSummary[], partialDoc: (stages: StageSummary[]) => RunSummaryDoc): RunObserver {
  return {
    onRecord: (r) => writer.appendRecord(r),
    onStageEnd: async (s, r) => {
      if (r.interrupted) return;
      if (!(await writer.syncRecords())) return;
      done.push(s);
      writeRunSummary(writer, { summary: partialDoc(done), complete: false });
    },
  };
}

/** A dashboard serving the results folder (or --ui) shows the run live. */
export function liveObserver(live: LiveLink | undefined, plannedStages: number): RunObserver | undefined {
  if (!live) return undefined;
  return {
    onStageStart: (spec, i) => live.feed.stageStarted(i, spec.label, plannedStages),
    onStageEnd: (_s, r) => {
      if (!r.interrupted) live.feed.stageEnded();
    },
  };
}
