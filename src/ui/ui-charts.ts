import type { TopLevelSpec } from 'vega-lite';
import { chartConfig } from '../report/charts/specs.js';
import type { ChartJson, LivePoint } from './client/api-types.js';

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

/**
 * TTFT of each successful request against the time it was sent, one colour per row. The data set is named
 * `points` so the live page can insert new points into the running view (charts grow without a redraw).
 */
export function ttftScatter(points: readonly LivePoint[], subtitle: string, xTitle = 'sent at (s since the first row started)'): ChartJson {
  const spec: TopLevelSpec = {
    $schema: SCHEMA,
    title: { text: 'Time to first token over the run', subtitle },
    width: 560,
    height: 260,
    // Points arrive while the view is on screen: let the layout grow with the axes.
    autosize: { type: 'pad', resize: true },
    data: { name: 'points', values: points.map((p) => ({ ...p })) },
    mark: { type: 'point', filled: true, size: 18, opacity: 0.6, tooltip: true },
    encoding: {
      x: { field: 't', type: 'quantitative', title: xTitle },
      // Room for five-digit labels from the start: a live chart drawn before its first points keeps its y title in view
      // when labels like 10,000 arrive.
      y: { field: 'ttftMs', type: 'quantitative', title: 'time to first token (ms)', scale: { type: 'log' }, axis: { minExtent: 48 } },
      color: { field: 'row', type: 'nominal', title: 'row', scale: { scheme: 'tableau10' }, sort: { field: 'order', op: 'min' } },
    },
    config: chartConfig,
  } as TopLevelSpec;
  return { name: 'ttft-over-time', title: 'Time to first token over the run', spec: spec as unknown as Record<string, unknown> };
}

export interface TelemetrySample {
  atMs: number;
  stage: number;
  running?: number;
  waiting?: number;
  kvUsage?: number;
}

/**
 * The time axis of a finished run's charts, the HTML report's (report/html-charts.ts): seconds from the run's first
 * request, so the TTFT scatter, the server's gauges and the GPU power line up.
 */
export const RUN_TIME_AXIS = 'time since the first request (s)';

/**
 * The server's own gauges over the run (telemetry.jsonl: /metrics read twice a second), on the run's time axis from
 * `zeroMs` (the first request's send, on the run's clock); samples before it (start-up checks) are left out.
 */
export function telemetryCharts(samples: readonly TelemetrySample[], stageLabels: ReadonlyMap<number, string>, zeroMs: number): ChartJson[] {
  samples = samples.filter((s) => s.atMs >= zeroMs);
  if (samples.length === 0) return [];
  const t = (s: TelemetrySample): number => (s.atMs - zeroMs) / 1000;
  const row = (s: TelemetrySample): string => stageLabels.get(s.stage) ?? `row ${s.stage + 1}`;
  const queue = samples.flatMap((s) => [
    ...(s.running !== undefined ? [{ t: t(s), series: 'running', value: s.running, row: row(s) }] : []),
    ...(s.waiting !== undefined ? [{ t: t(s), series: 'waiting', value: s.waiting, row: row(s) }] : []),
  ]);
  const kv = samples.filter((s) => s.kvUsage !== undefined).map((s) => ({ t: t(s), kv: (s.kvUsage as number) * 100, row: row(s) }));
  const charts: ChartJson[] = [];
  const base = { $schema: SCHEMA, width: 560, height: 220, config: chartConfig };
  if (queue.length) {
    charts.push({
      name: 'server-requests',
      title: 'Server requests running and waiting',
      spec: {
        ...base,
        title: { text: 'Server requests running and waiting', subtitle: 'from the server\'s /metrics, twice a second' },
        data: { values: queue },
        mark: { type: 'line', interpolate: 'step-after', tooltip: true },
        encoding: {
          x: { field: 't', type: 'quantitative', title: RUN_TIME_AXIS },
          y: { field: 'value', type: 'quantitative', title: 'requests' },
          color: { field: 'series', type: 'nominal', title: null, scale: { domain: ['running', 'waiting'], range: ['#4c78a8', '#e45756'] } },
        },
      },
    });
  }
  if (kv.length) {
    charts.push({
      name: 'server-kv-cache',
      title: 'KV-cache usage',
      spec: {
        ...base,
        title: { text: 'KV-cache usage', subtitle: 'from the server\'s /metrics, twice a second' },
        data: { values: kv },
        mark: { type: 'area', line: true, opacity: 0.3, interpolate: 'step-after', tooltip: true },
        encoding: {
          x: { field: 't', type: 'quantitative', title: RUN_TIME_AXIS },
          y: { field: 'kv', type: 'quantitative', title: 'KV-cache used (%)', scale: { domain: [0, 100] } },
        },
      },
    });
  }
  return charts;
}
