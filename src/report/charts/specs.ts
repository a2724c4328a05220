import type { TopLevelSpec } from 'vega-lite';
import { onCurve, type Slo } from '../../metrics/summary.js';
import { logY, sloRuleLayers } from './axes.js';
import type { StoredRun } from '../../store/run-store.js';
import { CHART_FONT } from './render.js';

/** A chart to write as <name>.svg / <name>.png and to show in the HTML report. */
export interface ChartDef {
  name: string;
  title: string;
  spec: TopLevelSpec;
}

const config = {
  font: CHART_FONT,
  background: 'white',
  title: { fontSize: 15, anchor: 'start' as const, subtitleFontSize: 11, subtitleColor: '#555' },
  axis: { labelFontSize: 11, titleFontSize: 12, grid: true, gridColor: '#e6e6e6', labelOverlap: true, labelSeparation: 6 },
  legend: { orient: 'bottom' as const, direction: 'vertical' as const, labelFontSize: 12, titleFontSize: 12, labelLimit: 640, symbolStrokeWidth: 2 },
  view: { stroke: '#ccc' },
};

/** Colours follow the order the runs were given in (the baseline first), not the alphabet. */
const runLegend = (names: readonly string[]) => ({
  field: 'series',
  type: 'nominal' as const,
  title: 'run',
  sort: [...names],
  scale: { domain: [...names], scheme: 'tableau10' },
});

/** Clicking a legend entry highlights that run (the HTML report's charts are interactive). */
const legendPick = [{ name: 'pick', select: { type: 'point' as const, fields: ['series'] }, bind: 'legend' as const }];
const fade = { condition: { param: 'pick', value: 1 }, value: 0.15 };

function subtitle(runs: readonly StoredRun[]): string {
  const models = [...new Set(runs.map((r) => r.summary.context.model))];
  return models.join(' vs ');
}

const SWEEP_METRICS = [
  { key: 'ttft', metric: 'ttftMs', title: 'Time to first token (ms)' },
  { key: 'itl', metric: 'itlMs', title: 'Inter-token latency (ms)' },
  { key: 'e2e', metric: 'e2eMs', title: 'Request latency (ms)' },
] as const satisfies readonly { key: string; metric: keyof Slo; title: string }[];
const SWEEP_AXES = [
  { key: 'req-rate', field: 'reqPerS', title: 'achieved request throughput (req/s)' },
  { key: 'token-rate', field: 'outTokPerS', title: 'output token throughput (tokens/s)' },
] as const;

/**
 * Latency-vs-throughput curves for sweeps: p50 solid, p99 dashed, one colour per run; the latency axis is logarithmic
 * with 1-2-5 ticks over the values drawn, and an SLO limit (--slo, a capacity run's) is a dotted red rule.
 */
export function sweepCharts(runs: readonly StoredRun[], names: readonly string[], slo?: Slo): ChartDef[] {
  const values: Record<string, string | number>[] = [];
  runs.forEach((run, i) => {
    for (const s of run.summary.stages.filter(onCurve)) {
      for (const [stat, pick] of [['p50', 'median'], ['p99', 'p99']] as const) {
        const row: Record<string, string | number> = {
          series: names[i] ?? run.id,
          row: s.label,
          stat,
          reqPerS: s.requestThroughput,
          outTokPerS: s.outputTokenThroughput,
        };
        for (const m of SWEEP_METRICS) row[m.key] = s.metrics[m.metric]?.[pick] ?? Number.NaN;
        values.push(row);
      }
    }
  });
  const charts: ChartDef[] = [];
  for (const m of SWEEP_METRICS) {
    for (const ax of SWEEP_AXES) {
      const title = `${m.title.replace(/ \(ms\)$/, '')} vs ${ax.key === 'req-rate' ? 'request' : 'output token'} throughput`;
      const data = values.filter((v) => Number.isFinite(v[m.key] as number));
      const limit = slo?.[m.metric];
      const line = {
        params: legendPick,
        mark: { type: 'line', point: true, strokeWidth: 2, tooltip: { content: 'data' } },
        encoding: {
          x: { field: ax.field, type: 'quantitative', title: ax.title },
          y: logY(m.key, m.title, [...data.map((v) => v[m.key] as number), ...(limit !== undefined ? [limit] : [])]),
          color: runLegend(names),
          strokeDash: { field: 'stat', type: 'nominal', title: 'percentile', legend: { symbolType: 'stroke', symbolSize: 400 }, scale: { domain: ['p50', 'p99'], range: [[1, 0], [6, 4]] } },
          detail: { field: 'stat' },
          order: { field: ax.field, type: 'quantitative' },
          opacity: fade,
        },
      };
      charts.push({
        name: `${m.key}-vs-${ax.key}`,
        title,
        spec: {
          $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
          title: { text: title, subtitle: `${subtitle(runs)} — p50 solid, p99 dashed${limit !== undefined ? `, SLO ${limit} ms dotted` : ''}` },
          width: 560,
          height: 320,
          data: { values: data },
          layer: [line, ...sloRuleLayers(limit)],
          config,
        } as unknown as TopLevelSpec,
      });
    }
  }
  return charts;
}

/** Per-request distributions for the HTML report (values already sampled). */
export function histogramChart(name: string, title: string, values: { series: string; value: number }[], names: readonly string[]): ChartDef {
  return {
    name,
    title,
    spec: {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      title: { text: title, subtitle: 'per request, successful measured requests (sampled when large)' },
      width: 560,
      height: 220,
      data: { values },
      params: legendPick,
      mark: { type: 'bar', tooltip: true },
      encoding: {
        x: { field: 'value', type: 'quantitative', bin: { maxbins: 40 }, title, axis: { labelOverlap: true, tickCount: 8 } },
        y: { aggregate: 'count', type: 'quantitative', stack: null, title: 'requests' },
        color: runLegend(names),
        opacity: { condition: { param: 'pick', value: 0.55 }, value: 0.08 },
      },
      config,
    } as TopLevelSpec,
  };
}

// ---- Shared with the capacity charts (capacity.ts) ----
export { config as chartConfig, fade, legendPick, runLegend };
