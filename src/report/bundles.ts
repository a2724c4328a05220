import { configError } from '../core/errors.js';
import { DEFINITIONS_NOTE, importedRunLine } from '../interop/definitions.js';
import { runStatusLine, type StoredRun } from '../store/run-store.js';
import { capacityCharts } from './charts/capacity.js';
import { sweepCharts, type ChartDef } from './charts/specs.js';
import { gridCharts } from './charts/grid.js';
import { runsSlo } from './charts/axes.js';
import type { Slo } from '../metrics/summary.js';
import { rankCapacity, renderCapacityRankingCsv } from './capacity-rank.js';
import { compareNoteLines, compareSections, renderCompareCsv, renderCompareMarkdown } from './compare.js';
import { pricesJson } from './gpu-prices.js';
import { computeGridVerdict } from './grid-verdict.js';
import { gridHeader, gridTable, sweepHeader, sweepOrder, sweepTable } from './layouts.js';
import type { ReportBundle } from './outputs.js';
import { renderCsvReport, renderMarkdownReport, renderTerminalReport, runNoteLines } from './run-summary.js';
import { fromMarkdown, type TerminalStyle } from './terminal.js';
import { seriesNames } from './series.js';
import { computeVerdict, type VerdictOptions } from './verdict.js';

/** Charts over the runs; SLO limits drawn are compare's --slo, else the ones the runs were measured against. */
function chartsFor(runs: readonly StoredRun[], names: readonly string[], kind: 'report' | 'compare', slo: Slo | undefined = runsSlo(runs)): ChartDef[] {
  const pick = (layout: 'grid' | 'sweep'): [StoredRun[], string[]] => {
    const idx = runs.map((r, i) => (r.summary.layout === layout ? i : -1)).filter((i) => i >= 0);
    return [idx.map((i) => runs[i] as StoredRun), idx.map((i) => names[i] as string)];
  };
  const [grids, gridNames] = pick('grid');
  const [sweeps, sweepNames] = pick('sweep');
  // Capacity runs lead with their capacity chart: it is the answer; the latency curves are its evidence.
  return [...capacityCharts(runs, names, kind), ...(grids.length ? gridCharts(grids, gridNames, slo) : []), ...(sweeps.length ? sweepCharts(sweeps, sweepNames, slo) : [])];
}

const withSlo = (slo: Slo | undefined): { slo?: Slo } => (slo ? { slo } : {});

const runJson = (r: StoredRun, series: string): object => ({ id: r.id, name: r.name, dir: r.dir, series, summary: { schemaVersion: r.schemaVersion, ...r.summary } });

/** `inferbench report`: each run's own seed tables, charts over all of them, one HTML. */
export function buildReportBundle(runs: StoredRun[], toolVersion: string): ReportBundle {
  const names = seriesNames(runs);
  // Imported runs: a line under each one's table (its tool, what it left out), the definitions note once at the end.
  const imported = runs.map((r, i) => importedRunLine(r, names[i] ?? r.id));
  const markdown = `${runs.map((r, i) => `<!-- run ${r.id} · ${r.name} -->\n${statusMarkdown(r)}${renderMarkdownReport(r.summary)}${imported[i] ? `\n- ${imported[i]}\n` : ''}`).join('\n')}${imported.some(Boolean) ? `\n- ${DEFINITIONS_NOTE}\n` : ''}`;
  const sections = runs.map((r, i) => {
    const grid = r.summary.layout === 'grid';
    const stages = grid ? r.summary.stages : [...r.summary.stages].sort((a, b) => sweepOrder(a) - sweepOrder(b));
    const capacity = r.summary.capacity ? { capacity: r.summary.capacity } : {};
    // The lines report.md and the terminal print under this run's table, from the one function that writes them.
    const notes = [...runNoteLines(r.summary), ...(imported[i] ? [imported[i] as string] : [])];
    return {
      heading: grid ? gridHeader(r.summary.context) : sweepHeader(r.summary.context),
      table: grid ? gridTable(stages) : sweepTable(stages, capacity),
      ...(r.summary.capacity ? { answer: r.summary.capacity.verdict } : {}),
      notes,
    };
  });
  const single = runs.length === 1 ? runs[0] : undefined;
  return {
    kind: 'report',
    title: single ? `inferbench report — ${single.summary.context.model} on ${names[0]}` : `inferbench report — ${runs.length} runs`,
    runs,
    names,
    markdown,
    sections,
    ...(imported.some(Boolean) ? { notes: [DEFINITIONS_NOTE] } : {}),
    csv: runs.map((r) => ({ file: runs.length === 1 ? 'table.csv' : `table-${r.id}.csv`, text: renderCsvReport(r.summary) })),
    json: { kind: 'report', runs: runs.map((r, i) => runJson(r, names[i] ?? r.id)) },
    charts: chartsFor(runs, names, 'report'),
    ...withSlo(runsSlo(runs)),
    toolVersion,
  };
}

/** `inferbench compare`: the seed layouts side by side, deltas against the first run, and a verdict. */
export function buildCompareBundle(runs: StoredRun[], opts: VerdictOptions, toolVersion: string): ReportBundle {
  if (runs.length < 2) throw configError('compare needs at least two runs', 'for one run use `inferbench report RUN`');
  const layouts = new Set(runs.map((r) => r.summary.layout));
  if (layouts.size > 1) {
    const which = runs.map((r) => `${r.id}: ${r.summary.layout}`).join(', ');
    throw configError(`compare takes runs of one layout, got grid and sweep runs (${which})`, 'compare the grids and the sweeps separately, or use `inferbench report` for a mixed set');
  }
  const names = seriesNames(runs);
  const sections = compareSections(runs, names);
  const tableNotes = compareNoteLines(sections, opts.mismatches);
  const verdict = runs[0]?.summary.layout === 'grid' ? computeGridVerdict(runs, names, opts) : computeVerdict(runs, names, opts);
  const capacity = rankCapacity(runs, names, opts);
  const capacityPart = capacity ? { table: capacity.table, lines: capacity.lines } : undefined;
  return {
    kind: 'compare',
    title: `inferbench compare — ${names.join(' vs ')}`,
    runs,
    names,
    markdown: `${runs.map(statusMarkdown).join('')}${renderCompareMarkdown(sections, verdict, opts, capacityPart)}`,
    sections: sections.map((s) => ({ heading: s.heading, table: s.table })),
    notes: [...tableNotes.legend, ...tableNotes.definitions],
    verdict: { table: verdict.table, lines: verdict.lines },
    ...(capacityPart ? { capacityRanking: capacityPart } : {}),
    csv: [{ file: 'compare.csv', text: renderCompareCsv(sections) }, ...(capacity ? [{ file: 'capacity-ranking.csv', text: renderCapacityRankingCsv(capacity) }] : [])],
    json: {
      kind: 'compare',
      slo: opts.slo ?? null,
      gpuHourPrice: opts.gpuHourPrice ?? null,
      // Every price used, in USD per GPU-hour: the one for every run, or each run's from the per-GPU list.
      gpuHourPrices: pricesJson(runs, names, opts),
      commonRate: verdict.commonRate ?? null,
      runs: runs.map((r, i) => runJson(r, names[i] ?? r.id)),
      sections: sections.map((s) => ({ series: s.series, heading: s.heading, table: s.table })),
      verdict: { table: verdict.table, lines: verdict.lines, runs: verdict.runs, figures: verdict.figures },
      ...(capacity ? { capacityRanking: capacity } : {}),
    },
    charts: chartsFor(runs, names, 'compare', opts.slo ?? runsSlo(runs)),
    ...withSlo(opts.slo ?? runsSlo(runs)),
    toolVersion,
  };
}

/** A run in progress or stopped early says so above its table (store/run-store.ts runStatusLine). */
function statusMarkdown(r: StoredRun): string {
  const line = runStatusLine(r);
  return line ? `**${r.name}: ${line}**\n\n` : '';
}

function statusText(r: StoredRun): string {
  const line = runStatusLine(r);
  return line ? `${r.name}: ${line}\n\n` : '';
}

/**
 * What `report` and `compare` print: for `report`, each run's compact terminal table (`--columns`); for `compare`,
 * its Markdown side by side with the markup turned into terminal text (bold only where `style` draws it).
 */
export function terminalText(bundle: ReportBundle, opts: { columns?: readonly string[]; style: TerminalStyle }): string {
  if (bundle.kind === 'compare') return fromMarkdown(bundle.markdown, opts.style);
  const imported = bundle.runs.map((r, i) => importedRunLine(r, bundle.names[i] ?? r.id));
  const parts = bundle.runs.map((r, i) => `${statusText(r)}${renderTerminalReport(r.summary, opts)}${imported[i] ? `\n- ${imported[i]}\n` : ''}`);
  return `${parts.join('\n')}${imported.some(Boolean) ? `\n- ${DEFINITIONS_NOTE}\n` : ''}`;
}
