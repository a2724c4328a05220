import type { TopLevelSpec } from 'vega-lite';
import type { Slo } from '../metrics/summary.js';
import type { StoredRun } from '../store/run-store.js';
import type { RunDetails, TelemetryPoint } from '../store/run-details.js';
import { logY, sloRuleLayers } from './charts/axes.js';
import { chartConfig, fade, legendPick, runLegend, type ChartDef } from './charts/specs.js';

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

/** The per-row view's key for a row: run index and stage index. */
export const rowKey = (run: number, stage: number): string => `${run}:${stage}`;

const spec = (s: object): TopLevelSpec => ({ $schema: SCHEMA, config: chartConfig, ...s }) as unknown as TopLevelSpec;

/**
 * The per-row histograms: every row's sampled values are in the data, a `row` signal (set by the row picker) keeps
 * one row's, so each histogram describes one load point — never every row pooled.
 */
export function rowHistograms(details: readonly RunDetails[], firstKey: string, slo: Slo | undefined): ChartDef[] {
  const metrics = [
    ['ttftMs', 'row-ttft', 'Time to first token (ms)', slo?.ttftMs],
    ['itlMs', 'row-itl', 'Inter-token latency (ms)', slo?.itlMs],
    ['e2eMs', 'row-e2e', 'Request latency (ms)', slo?.e2eMs],
  ] as const;
  return metrics.flatMap(([key, name, title, limit]) => {
    const values = details.flatMap((d, i) => [...d.perRow.entries()].flatMap(([stage, row]) => row[key].map((value) => ({ key: rowKey(i, stage), value }))));
    if (values.length === 0) return [];
    return [
      {
        name,
        title,
        spec: spec({
          // The SLO limit is named, not drawn: a rule far past the data would squeeze every bar to one side.
          title: { text: title, subtitle: `the picked row: its measured successful requests (sampled when large)${limit !== undefined ? `; SLO ${limit} ms` : ''}` },
          width: 420,
          height: 200,
          data: { values },
          params: [{ name: 'row', value: firstKey }],
          transform: [{ filter: 'datum.key === row' }],
          mark: { type: 'bar', tooltip: true, color: '#4c78a8' },
          encoding: {
            x: { field: 'value', type: 'quantitative', bin: { maxbins: 30 }, title, axis: { tickCount: 8 } },
            y: { aggregate: 'count', type: 'quantitative', title: 'requests' },
          },
        }),
      },
    ];
  });
}

/** Throughput, requests in flight and TTFT over each run's time (seconds from its first send; ramp-up included). */
export function timelineCharts(runs: readonly StoredRun[], names: readonly string[], details: readonly RunDetails[], slo: Slo | undefined): ChartDef[] {
  const series = (i: number): string => names[i] ?? runs[i]?.id ?? String(i);
  const bins = details.flatMap((d, i) => d.timeline.map((b) => ({ series: series(i), ...b })));
  const labelOf = (i: number, stage: number): string => runs[i]?.summary.stages.find((s) => s.index === stage)?.label ?? String(stage);
  const points = details.flatMap((d, i) => d.points.filter((p) => p.ttftMs !== undefined).map((p) => ({ series: series(i), row: labelOf(i, p.stage), tS: p.tS, ttftMs: p.ttftMs as number })));
  const x = { field: 'tS', type: 'quantitative', title: 'time since the first request (s)' };
  const line = (field: string, title: string) =>
    spec({
      width: 560,
      height: 220,
      data: { values: bins },
      params: legendPick,
      mark: { type: 'line', interpolate: 'step-after', tooltip: true },
      encoding: { x, y: { field, type: 'quantitative', title }, color: runLegend(names), opacity: fade },
    });
  const out: ChartDef[] = [];
  if (bins.length > 0) {
    out.push({ name: 'time-throughput', title: 'Completions per second over time', spec: { ...line('completionsPerS', 'successful completions per second'), title: { text: 'Throughput over time', subtitle: 'successful completions per second, every request (ramp-up included)' } } as TopLevelSpec });
    out.push({ name: 'time-in-flight', title: 'Requests in flight over time', spec: { ...line('inFlight', 'requests in flight'), title: { text: 'Requests in flight over time', subtitle: 'sent and not yet finished, at the end of each interval' } } as TopLevelSpec });
  }
  if (points.length > 0) {
    out.push({
      name: 'time-ttft',
      title: 'TTFT over time',
      spec: spec({
        title: { text: 'Time to first token over time', subtitle: 'one point per measured successful request (sampled when large), by send time' },
        width: 560,
        height: 220,
        data: { values: points },
        layer: [
          {
            params: legendPick,
            mark: { type: 'point', filled: true, size: 14, tooltip: { content: 'data' } },
            encoding: { x, y: logY('ttftMs', 'TTFT (ms)', [...points.map((p) => p.ttftMs), ...(slo?.ttftMs !== undefined ? [slo.ttftMs] : [])]), color: runLegend(names), opacity: fade },
          },
          ...sloRuleLayers(slo?.ttftMs),
        ],
      }),
    });
  }
  return out;
}

/** The server's own gauges over time (telemetry.jsonl): running and waiting requests, KV-cache use. */
export function telemetryCharts(names: readonly string[], telemetry: readonly (readonly TelemetryPoint[])[]): ChartDef[] {
  const queue = telemetry.flatMap((t, i) =>
    t.flatMap((p) => [
      ...(p.running !== undefined ? [{ series: names[i] ?? String(i), gauge: 'running', tS: p.tS, value: p.running }] : []),
      ...(p.waiting !== undefined ? [{ series: names[i] ?? String(i), gauge: 'waiting', tS: p.tS, value: p.waiting }] : []),
    ]),
  );
  const kv = telemetry.flatMap((t, i) => t.filter((p) => p.kvUsage !== undefined).map((p) => ({ series: names[i] ?? String(i), tS: p.tS, kvPct: (p.kvUsage as number) * 100 })));
  const x = { field: 'tS', type: 'quantitative', title: 'time since the first request (s)' };
  const out: ChartDef[] = [];
  if (queue.length > 0) {
    out.push({
      name: 'server-queue',
      title: 'Server: running and waiting requests',
      spec: spec({
        title: { text: 'Server: running and waiting requests', subtitle: "the server's /metrics, sampled twice a second — waiting solid, running dashed" },
        width: 560,
        height: 220,
        data: { values: queue },
        params: legendPick,
        mark: { type: 'line', interpolate: 'step-after', tooltip: true },
        encoding: {
          x,
          y: { field: 'value', type: 'quantitative', title: 'requests' },
          color: runLegend(names),
          strokeDash: { field: 'gauge', type: 'nominal', title: 'gauge', scale: { domain: ['waiting', 'running'], range: [[1, 0], [5, 3]] } },
          detail: { field: 'gauge' },
          opacity: fade,
        },
      }),
    });
  }
  if (kv.length > 0) {
    out.push({
      name: 'server-kv',
      title: 'Server: KV-cache use',
      spec: spec({
        title: { text: 'Server: KV-cache use', subtitle: "the server's /metrics, sampled twice a second" },
        width: 560,
        height: 220,
        data: { values: kv },
        params: legendPick,
        mark: { type: 'line', interpolate: 'step-after', tooltip: true },
        encoding: { x, y: { field: 'kvPct', type: 'quantitative', title: 'KV cache used (%)', scale: { domain: [0, 100] } }, color: runLegend(names), opacity: fade },
      }),
    });
  }
  return out;
}

/** One power reading on the chart's time axis (seconds from the run's first send). */
export interface PowerChartPoint {
  tS: number;
  gpu: number;
  watts: number;
  /** Several --target URLs: whose GPU it is. */
  replica?: number;
}

/** The line a reading belongs to: `GPU 0`, `all` (a source's one total), `replica 1 GPU 0`. */
const powerLineName = (x: PowerChartPoint): string => `${x.replica !== undefined ? `replica ${x.replica} ` : ''}${x.gpu < 0 ? 'all' : `GPU ${x.gpu}`}`;

/** GPU power over time (power.jsonl, `run --power`): one line per run and GPU, beside the server's gauges. */
export function powerCharts(names: readonly string[], power: readonly (readonly PowerChartPoint[])[]): ChartDef[] {
  const values = power.flatMap((p, i) => p.map((x) => ({ series: names[i] ?? String(i), gpu: powerLineName(x), tS: x.tS, watts: x.watts })));
  if (values.length === 0) return [];
  return [{
    name: 'gpu-power',
    title: 'GPU power',
    spec: spec({
      title: { text: 'GPU power', subtitle: 'run --power: each GPU\'s draw, read every 100 ms; each row\'s energy is integrated over its window only' },
      width: 560,
      height: 220,
      data: { values },
      params: legendPick,
      mark: { type: 'line', tooltip: true },
      encoding: {
        x: { field: 'tS', type: 'quantitative', title: 'time since the first request (s)' },
        y: { field: 'watts', type: 'quantitative', title: 'power (W)' },
        color: runLegend(names),
        detail: { field: 'gpu' },
        strokeDash: { field: 'gpu', type: 'nominal', title: 'GPU' },
        opacity: fade,
      },
    }),
  }];
}

/** Prompt/output length histograms; TTFT against prompt length and chunk gaps by position where lengths vary. */
export function workloadCharts(runs: readonly StoredRun[], names: readonly string[], details: readonly RunDetails[]): ChartDef[] {
  const series = (i: number): string => names[i] ?? runs[i]?.id ?? String(i);
  const points = details.flatMap((d, i) => d.points.map((p) => ({ series: series(i), ...p })));
  if (points.length === 0) return [];
  const varies = (pick: (p: (typeof points)[number]) => number): boolean => new Set(points.map(pick)).size > 1;
  const histogram = (name: string, field: 'promptTokens' | 'outputTokens', title: string): ChartDef => ({
    name,
    title,
    spec: spec({
      title: { text: title, subtitle: 'measured successful requests (sampled when large)' },
      width: 420,
      height: 180,
      data: { values: points },
      params: legendPick,
      mark: { type: 'bar', tooltip: true },
      encoding: {
        x: { field, type: 'quantitative', bin: { maxbins: 30 }, title: `${title.toLowerCase()} (tokens)` },
        y: { aggregate: 'count', type: 'quantitative', stack: null, title: 'requests' },
        color: runLegend(names),
        opacity: { condition: { param: 'pick', value: 0.6 }, value: 0.08 },
      },
    }),
  });
  // A fixed length is one bar: the workload table says it better.
  const out = [
    ...(varies((p) => p.promptTokens) ? [histogram('prompt-lengths', 'promptTokens', 'Prompt length')] : []),
    ...(varies((p) => p.outputTokens) ? [histogram('output-lengths', 'outputTokens', 'Output length')] : []),
  ];
  if (varies((p) => p.promptTokens) && points.some((p) => p.ttftMs !== undefined)) {
    out.push({
      name: 'ttft-vs-prompt',
      title: 'TTFT vs prompt length',
      spec: spec({
        title: { text: 'Time to first token vs prompt length', subtitle: 'one point per measured successful request (sampled when large)' },
        width: 560,
        height: 240,
        data: { values: points.filter((p) => p.ttftMs !== undefined) },
        params: legendPick,
        mark: { type: 'point', filled: true, size: 16, tooltip: { content: 'data' } },
        encoding: { x: { field: 'promptTokens', type: 'quantitative', title: 'prompt length (tokens)' }, y: { field: 'ttftMs', type: 'quantitative', title: 'TTFT (ms)' }, color: runLegend(names), opacity: fade },
      }),
    });
  }
  const gaps = details.flatMap((d, i) => d.gapByPosition.map((g) => ({ series: series(i), ...g })));
  if (varies((p) => p.outputTokens) && gaps.length > 1) {
    out.push({
      name: 'itl-by-position',
      title: 'Inter-token gap by position',
      spec: spec({
        title: { text: 'Inter-token gap by position in the reply', subtitle: 'mean gap between content chunks at each position (≈ token), every request that reached it; past 32 in steps of 32' },
        width: 560,
        height: 220,
        data: { values: gaps },
        params: legendPick,
        mark: { type: 'line', point: true, tooltip: { content: 'data' } },
        encoding: { x: { field: 'position', type: 'quantitative', title: 'chunk position in the reply', scale: { type: 'log' } }, y: { field: 'meanGapMs', type: 'quantitative', title: 'mean gap (ms)' }, color: runLegend(names), opacity: fade },
      }),
    });
  }
  return out;
}
