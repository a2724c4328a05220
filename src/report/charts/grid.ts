import type { TopLevelSpec } from 'vega-lite';
import type { Slo, StageSummary } from '../../metrics/summary.js';
import type { StoredRun } from '../../store/run-store.js';
import { cellLatencyStage, gridCells } from '../layouts.js';
import { sloRuleLayers, VALUE_LABEL } from './axes.js';
import { chartConfig, fade, legendPick, runLegend, type ChartDef } from './specs.js';

/** The seed-004 charts (and TTFT/ITL, which grids now measure): one bar per cell and run. */
export const GRID_CHARTS = [
  { name: 'throughput-req', title: 'Throughput (requests/s)', field: 'reqPerS' },
  { name: 'throughput-token-out', title: 'Throughput (output token/s)', field: 'outTokPerS' },
  { name: 'pertoken', title: 'Average latency per token (ms)', field: 'latPerTok' },
  { name: 'per-out-token', title: 'Average latency per output token (ms)', field: 'latPerOutTok' },
  { name: 'grid-ttft', title: 'Time to first token, mean (ms)', field: 'ttft', slo: 'ttftMs' },
  { name: 'grid-itl', title: 'Inter-token latency, mean (ms)', field: 'itl', slo: 'itlMs' },
] as const;

const ok = (s: StageSummary | undefined): s is StageSummary => s !== undefined && s.requests.ok > 0;

/** Bars narrower than this get no value label (it would not fit even turned upright). */
const MIN_LABELLED_BAR_PX = 11;

/**
 * Grid bar charts readable at the seeds' 4×4 size: one panel per input length (labelled under it), the output
 * lengths along each panel's x axis — so every cell is named, none dropped for overlap — one bar per run in each,
 * its value written above it (turned upright) when the bar is wide enough. With an SLO, TTFT/ITL draw its limit.
 */
export function gridCharts(runs: readonly StoredRun[], names: readonly string[], slo?: Slo): ChartDef[] {
  const values: Record<string, string | number>[] = [];
  runs.forEach((run, i) => {
    // Throughput from each cell's burst, latency from its low-load pass (as the grid table reads them).
    for (const c of gridCells(run.summary.stages)) {
      const t = ok(c.throughput) ? c.throughput : undefined;
      const l = cellLatencyStage(c);
      const lm = ok(l) ? l.metrics : undefined;
      if (!t && !lm) continue;
      values.push({
        series: names[i] ?? run.id,
        cell: `${c.input}/${c.output}`,
        input: c.input,
        output: c.output,
        reqPerS: t?.requestThroughput ?? Number.NaN,
        outTokPerS: t?.outputTokenThroughput ?? Number.NaN,
        latPerTok: lm?.latencyPerTokenMs?.mean ?? Number.NaN,
        latPerOutTok: lm?.latencyPerOutputTokenMs?.mean ?? Number.NaN,
        ttft: lm?.ttftMs?.mean ?? Number.NaN,
        itl: lm?.itlMs?.mean ?? Number.NaN,
      });
    }
  });
  const outputs = [...new Set(values.map((v) => v.output as number))].sort((a, b) => a - b);
  const inputs = [...new Set(values.map((v) => v.input as number))].sort((a, b) => a - b);
  const barPx = Math.max(8, Math.min(28, Math.floor(112 / Math.max(1, runs.length))));
  const step = barPx * runs.length + 10;
  const panelWidth = Math.max(90, step * outputs.length);
  return GRID_CHARTS.flatMap((c) => {
    const data = values.filter((v) => Number.isFinite(v[c.field] as number)).map((v) => ({ ...v, v: v[c.field] as number }));
    if (data.length === 0 && (c.field === 'ttft' || c.field === 'itl')) return [];
    const limit = 'slo' in c ? slo?.[c.slo] : undefined;
    const top = Math.max(0, ...data.map((d) => d.v), limit ?? 0);
    // Each panel's x axis names its output lengths; the panel's label under it names the input length.
    const x = { field: 'output', type: 'ordinal', sort: outputs, title: null, axis: { labelAngle: 0 } };
    const y = { field: 'v', type: 'quantitative', title: c.title, scale: { domain: [0, top * 1.22 || 1], nice: false } };
    const bars = {
      params: legendPick,
      mark: { type: 'bar', tooltip: { content: 'data' } },
      encoding: { x, xOffset: { field: 'series', type: 'nominal', sort: [...names] }, y, color: runLegend(names), opacity: fade },
    };
    const labels = {
      transform: [{ calculate: VALUE_LABEL, as: 'label' }],
      mark: { type: 'text', angle: 270, align: 'left', baseline: 'middle', dx: 3, fontSize: 9, color: '#333' },
      encoding: { x, xOffset: { field: 'series', type: 'nominal', sort: [...names] }, y, text: { field: 'label' } },
    };
    const spec = {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      title: { text: c.title, subtitle: `${subtitle(runs)} — bars: output length within each input length (tokens)` },
      data: { values: data },
      facet: {
        column: {
          field: 'input',
          type: 'ordinal',
          sort: inputs,
          title: 'output length (tokens), one panel per input length',
          header: { labelOrient: 'bottom', titleOrient: 'bottom', labelExpr: "'input ' + datum.value", labelFontSize: 12, labelFontWeight: 'bold', titleFontSize: 12, titleFontWeight: 'normal' },
        },
      },
      spacing: 8,
      spec: {
        width: panelWidth,
        height: 260,
        layer: [bars, ...(barPx >= MIN_LABELLED_BAR_PX ? [labels] : []), ...sloRuleLayers(limit)],
      },
      resolve: { scale: { y: 'shared' } },
      config: chartConfig,
    };
    return [{ name: c.name, title: c.title, spec: spec as unknown as TopLevelSpec }];
  });
}

function subtitle(runs: readonly StoredRun[]): string {
  return [...new Set(runs.map((r) => r.summary.context.model))].join(' vs ');
}
