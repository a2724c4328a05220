import type { RunOptions } from '../config/run-options.js';
import { capacityResult } from '../load/capacity.js';
import type { StageSummary } from '../metrics/summary.js';
import type { RunSummaryDoc } from '../report/run-summary.js';

/** `capacity` for a run's summary (capacity profile only): the search's answer from the rows run so far. */
export function capacityField(opts: RunOptions, stages: readonly StageSummary[], interrupted: boolean): Pick<RunSummaryDoc, 'capacity'> {
  return opts.capacity ? { capacity: capacityResult(stages, opts.capacity, { interrupted }) } : {};
}

/** Exit 1 when a finished capacity search found no load that meets the SLO (the table's answer says so). */
export function capacityFailed(doc: RunSummaryDoc): boolean {
  return doc.capacity !== undefined && !doc.interrupted && doc.capacity.feasibleMax === null;
}
