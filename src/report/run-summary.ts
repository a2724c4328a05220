import type { CapacityResult } from '../load/capacity-types.js';
import type { ClientHealth } from '../metrics/health.js';
import type { StageSummary } from '../metrics/summary.js';
import { gridHeader, gridTable, sweepHeader, sweepTable, type TableContext } from './layouts.js';
import { findingLines } from './findings.js';
import { capacityNoteLines } from './capacity-notes.js';
import { rowNoteLines } from './row-notes.js';
import { renderCsv, renderMarkdown } from './table.js';

/** summary.json: everything needed to re-render a run's tables without its requests. */
export interface RunSummaryDoc {
  tool: { name: 'inferbench'; version: string };
  runId: string;
  createdAt: string;
  finishedAt: string;
  layout: 'sweep' | 'grid';
  context: TableContext;
  target: {
    url?: string;
    api: string;
    engine: string;
    model: string;
    simulated: boolean;
    detection?: string;
  };
  profile: string;
  workload: string;
  /** How the measured window is chosen, printed with the results. */
  windowRules: string;
  stages: StageSummary[];
  /** `--profile capacity`: the search's answer. */
  capacity?: CapacityResult;
  health?: ClientHealth;
  interrupted: boolean;
  notes: string[];
  outDir?: string;
}

export function renderMarkdownReport(doc: RunSummaryDoc): string {
  const header = doc.layout === 'grid' ? gridHeader(doc.context) : sweepHeader(doc.context);
  const table = doc.layout === 'grid' ? gridTable(doc.stages) : sweepTable(doc.stages, sloTarget(doc));
  // A prediction's token counts are the simulator's own: comparing them with themselves says nothing.
  const foot: string[] = doc.context.predicted ? [] : findingLines(doc.stages, { goodput: !doc.capacity });
  foot.push(...rowNoteLines(doc.stages));
  if (doc.interrupted) foot.push('Interrupted: the last row covers only the requests finished before the stop.');
  if (doc.capacity) foot.push(...capacityNoteLines(doc.capacity, doc.stages));
  const answer = doc.capacity ? `\n**${doc.capacity.verdict}**\n` : '';
  return `${header}\n\n${renderMarkdown(table)}\n${answer}${foot.length ? `\n${foot.map((l) => `- ${l}`).join('\n')}\n` : ''}`;
}

function sloTarget(doc: RunSummaryDoc): { capacity?: CapacityResult } {
  return doc.capacity ? { capacity: doc.capacity } : {};
}

export function renderCsvReport(doc: RunSummaryDoc): string {
  return renderCsv(doc.layout === 'grid' ? gridTable(doc.stages) : sweepTable(doc.stages, sloTarget(doc)));
}
