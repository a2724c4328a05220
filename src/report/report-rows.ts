import type { StageSummary } from '../metrics/summary.js';
import { cellLatencyStage, gridCells, sweepOrder } from './layouts.js';

/**
 * One printed row, whatever the layout: a sweep row is one stage; a grid row is one input × output cell, whose
 * throughput figures come from its burst and whose latency figures come from its low-load pass (older runs and
 * predictions without a pass read both from the burst), as the seed tables measured them.
 */
export interface ReportRow {
  /** The stage label (sweep) or "input/output" (grid). */
  label: string;
  input?: number;
  output?: number;
  /** Where throughput, sample and failure counts are read. */
  throughput?: StageSummary;
  /** Where per-request latencies are read. */
  latency?: StageSummary;
  /** Every stage of the row, in run order (grid: burst, then latency pass). */
  stages: StageSummary[];
}

/** The rows of a run in table order: sweeps by target load, grids in run order (input, then output). */
export function reportRows(layout: 'sweep' | 'grid', stages: readonly StageSummary[]): ReportRow[] {
  if (layout === 'grid') {
    return gridCells(stages).map((c) => {
      const own = [c.throughput, c.latency].filter((s): s is StageSummary => s !== undefined);
      // As gridTable: a failed latency pass shows —, never the burst's latencies under the pass's name.
      const latency = cellLatencyStage(c);
      return {
        label: `${c.input}/${c.output}`,
        input: c.input,
        output: c.output,
        ...(c.throughput ? { throughput: c.throughput } : {}),
        ...(latency ? { latency } : {}),
        stages: own,
      };
    });
  }
  return [...stages].sort((a, b) => sweepOrder(a) - sweepOrder(b)).map((s) => ({ label: s.label, throughput: s, latency: s, stages: [s] }));
}
