import type { TopLevelSpec } from 'vega-lite';
import type { CapacityProbe, CapacityResult } from '../../load/capacity-types.js';
import type { StoredRun } from '../../store/run-store.js';
import { boundaryLabel, capacityCell, probeRow, sloLimitsText } from '../capacity-text.js';
import { chartConfig, fade, legendPick, runLegend, type ChartDef } from './specs.js';

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';
const WIDTH = 560;
/** Characters of 11-px subtitle text that fit over a panel and its legend (about 6.3 px a character). */
const SUBTITLE_CHARS = 110;

/** A line broken at spaces into lines of at most `max` characters (a longer word stays whole). */
export function wrapWords(text: string, max: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > max) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/** Outcome of one probe, as the legend names it (colour and shape both encode it, so it reads in grey too). */
export const OUTCOMES = ['pass', 'fail', 'did not keep up (queue grew)'] as const;
const OUTCOME_COLOURS = ['#2ca02c', '#d62728', '#7b2d8e'];
const OUTCOME_SHAPES = ['circle', 'cross', 'triangle-up'];

const outcomeOf = (p: CapacityProbe): string => (p.overSaturated ? OUTCOMES[2] : p.pass ? OUTCOMES[0] : OUTCOMES[1]);

/** The load axis: its title, and whole ticks for stream counts. */
function loadAxis(caps: readonly CapacityResult[]): object {
  const streams = caps[0]?.unit === 'streams';
  return {
    type: 'quantitative',
    title: streams ? 'load (concurrent streams)' : 'load (offered request rate, req/s)',
    scale: { domain: xDomain(caps), nice: false },
    ...(streams ? { axis: { format: 'd', tickMinStep: 1 } } : {}),
  };
}

/** x from 0 to a little past the highest load drawn (probes and the boundary), so no mark sits on the edge. */
function xDomain(caps: readonly CapacityResult[]): [number, number] {
  const loads = caps.flatMap((c) => [...c.probes.map((p) => p.load), c.firstBreach ?? 0, c.feasibleMax ?? 0]);
  return [0, Math.max(1, ...loads) * 1.08];
}

/** Attainment axis: down to just below the lowest value drawn, so 97% vs 99% stays visible when nothing fell far. */
function yDomain(caps: readonly CapacityResult[]): [number, number] {
  const lows = caps.flatMap((c) => [c.attainment, ...c.probes.map((p) => p.attainment), ...c.fitted.map((f) => f.attainment)]);
  const low = Math.min(...lows);
  // 101, not 100: probes at 100% sit just under the frame rather than on it.
  return [Math.max(0, Math.floor((low - 5) / 10) * 10), 101];
}

const outcomeScale = { domain: [...OUTCOMES], range: OUTCOME_COLOURS };
const shapeScale = { domain: [...OUTCOMES], range: OUTCOME_SHAPES };

/** The shaded band from the last passing load to the first failing one (or a rule when one side is missing). */
function boundaryLayers(c: CapacityResult, labelY: number | 'top'): object[] {
  const lo = c.feasibleMax ?? c.firstBreach;
  if (lo === null) return [];
  const hi = c.feasibleMax !== null && c.firstBreach !== null ? c.firstBreach : lo;
  const data = { values: [{ lo, hi, label: boundaryLabel(c) }] };
  const band =
    hi > lo
      ? { data, mark: { type: 'rect', color: '#ff7f0e', opacity: 0.18 }, encoding: { x: { field: 'lo', type: 'quantitative' }, x2: { field: 'hi' } } }
      : { data, mark: { type: 'rule', color: '#ff7f0e', strokeWidth: 2 }, encoding: { x: { field: 'lo', type: 'quantitative' } } };
  const edge = { data, mark: { type: 'rule', color: '#e6550d', strokeWidth: 1.5 }, encoding: { x: { field: 'lo', type: 'quantitative' } } };
  if (labelY === 'top') return [band, edge];
  const label = {
    data,
    mark: { type: 'text', align: 'right', dx: -4, dy: -6, fontSize: 11, color: '#a63603', fontWeight: 'bold' },
    encoding: { x: { field: 'lo', type: 'quantitative' }, y: { datum: labelY }, text: { field: 'label' } },
  };
  return [band, edge, label];
}

function targetLayers(attainment: number): object[] {
  const data = { values: [{ target: attainment, label: `target ${attainment}%` }] };
  return [
    { data, mark: { type: 'rule', strokeDash: [6, 4], color: '#333' }, encoding: { y: { field: 'target', type: 'quantitative' } } },
    { data, mark: { type: 'text', align: 'left', x: 4, dy: 11, fontSize: 11, color: '#333' }, encoding: { y: { field: 'target', type: 'quantitative' }, text: { field: 'label' } } },
  ];
}

/** One run's capacity search: attainment per probe with its monotone fit (top), TTFT/ITL percentiles (bottom). */
export function capacityChart(run: StoredRun, series: string, name: string): ChartDef | undefined {
  const c = run.summary.capacity;
  if (!c || c.probes.length === 0) return undefined;
  const x = loadAxis([c]);
  const [yLow] = yDomain([c]);
  const probes = c.probes.map((p) => ({
    load: p.load,
    attainment: p.attainment,
    outcome: outcomeOf(p),
    row: probeRow(run.summary.stages, p)?.label ?? `probe ${p.stage}`,
    requests: p.requests,
    errorPercent: Number((p.errorShare * 100).toFixed(2)),
    ...(p.overSaturated ? { stoppedEarly: p.overSaturated } : {}),
  }));
  const attainmentPanel = {
    height: 230,
    layer: [
      ...boundaryLayers(c, yLow + (100 - yLow) * 0.08),
      ...targetLayers(c.attainment),
      {
        data: { values: c.fitted.map((f) => ({ ...f, line: 'monotone fit' })) },
        mark: { type: 'line', color: '#1f77b4', strokeWidth: 2, interpolate: 'linear' },
        encoding: { x: { field: 'load', ...x }, y: { field: 'attainment', type: 'quantitative' }, order: { field: 'load', type: 'quantitative' } },
      },
      {
        data: { values: probes },
        mark: { type: 'point', filled: true, size: 90, opacity: 0.9, tooltip: { content: 'data' } },
        encoding: {
          x: { field: 'load', ...x },
          y: { field: 'attainment', type: 'quantitative', title: 'requests meeting the SLO (%)', scale: { domain: yDomain([c]), nice: false } },
          color: { field: 'outcome', type: 'nominal', title: 'probe', scale: outcomeScale },
          shape: { field: 'outcome', type: 'nominal', title: 'probe', scale: shapeScale },
        },
      },
    ],
  };
  const latency = c.probes.flatMap((p) => {
    const s = probeRow(run.summary.stages, p);
    if (!s) return [];
    return (
      [
        ['TTFT', 'p50', s.metrics.ttftMs?.median],
        ['TTFT', 'p99', s.metrics.ttftMs?.p99],
        ['ITL', 'p50', s.metrics.itlMs?.median],
        ['ITL', 'p99', s.metrics.itlMs?.p99],
      ] as const
    )
      .filter(([, , ms]) => ms !== undefined && Number.isFinite(ms) && ms > 0)
      .map(([metric, stat, ms]) => ({ load: p.load, metric, stat, ms, outcome: outcomeOf(p), row: s.label }));
  });
  const limits = [
    ...(c.slo.ttftMs !== undefined ? [{ metric: 'TTFT', ms: c.slo.ttftMs, label: `TTFT limit ${c.slo.ttftMs} ms` }] : []),
    ...(c.slo.itlMs !== undefined ? [{ metric: 'ITL', ms: c.slo.itlMs, label: `ITL limit ${c.slo.itlMs} ms` }] : []),
  ];
  const metricColour = { field: 'metric', type: 'nominal', title: 'latency', scale: { domain: ['TTFT', 'ITL'], range: ['#4c78a8', '#f58518'] } };
  const latencyPanel = {
    height: 210,
    layer: [
      ...boundaryLayers(c, 'top'),
      ...(limits.length
        ? [
            { data: { values: limits }, mark: { type: 'rule', strokeDash: [2, 3], strokeWidth: 1.5 }, encoding: { y: { field: 'ms', type: 'quantitative' }, color: metricColour } },
            { data: { values: limits }, mark: { type: 'text', align: 'left', x: 4, dy: -6, fontSize: 10 }, encoding: { y: { field: 'ms', type: 'quantitative' }, text: { field: 'label' }, color: metricColour } },
          ]
        : []),
      {
        data: { values: latency },
        mark: { type: 'line', point: true, strokeWidth: 2, tooltip: { content: 'data' } },
        encoding: {
          x: { field: 'load', ...x },
          y: { field: 'ms', type: 'quantitative', title: 'latency per probe (ms)', scale: { type: 'log' } },
          color: metricColour,
          strokeDash: { field: 'stat', type: 'nominal', title: 'percentile', legend: { symbolType: 'stroke', symbolSize: 400, encode: { symbols: { update: { stroke: { value: '#555' } } } } }, scale: { domain: ['p50', 'p99'], range: [[1, 0], [6, 4]] } },
          detail: { field: 'stat' },
          order: { field: 'load', type: 'quantitative' },
        },
      },
    ],
  };
  const title = `Capacity — ${series}`;
  return {
    name,
    title,
    spec: {
      $schema: SCHEMA,
      title: {
        text: title,
        // Wrapped to the panels' width: one long line made the image as wide as the sentence, the plots a strip at its left.
        subtitle: [
          c.verdict || boundaryLabel(c),
          `points: probes — share of their requests within ${sloLimitsText(c.slo)} (failed requests count as misses); line: the monotone fit the search decides on`,
          `dashed: target ${c.attainment}% (= p${c.attainment} within each limit); shaded: last passing load … first failing load`,
        ].flatMap((line) => wrapWords(line, SUBTITLE_CHARS)),
      },
      vconcat: [
        { width: WIDTH, ...attainmentPanel },
        { width: WIDTH, ...latencyPanel },
      ],
      // Each panel keeps its own legends (probe outcome above, latency metric and percentile below), beside it.
      resolve: {
        scale: { color: 'independent', shape: 'independent', strokeDash: 'independent' },
        legend: { color: 'independent', shape: 'independent', strokeDash: 'independent' },
      },
      config: { ...chartConfig, legend: { ...chartConfig.legend, orient: 'right' } },
    } as unknown as TopLevelSpec,
  };
}

/** `compare`: every run's attainment curve (its monotone fit), its probes, and its capacity as a rule in its colour. */
export function capacityCompareChart(runs: readonly StoredRun[], names: readonly string[], name: string): ChartDef | undefined {
  // The legend names each run with its capacity: labels on the rules would overlap where capacities are close.
  const withCap = runs
    .map((r, i) => ({ c: r.summary.capacity, series: r.summary.capacity ? `${names[i] ?? r.id}: ${capacityCell(r.summary.capacity, { short: true })}` : '' }))
    .filter((r): r is { c: CapacityResult; series: string } => !!r.c && r.c.probes.length > 0);
  if (withCap.length === 0) return undefined;
  const caps = withCap.map((r) => r.c);
  const x = loadAxis(caps);
  const y = { type: 'quantitative', title: 'requests meeting the SLO (%)', scale: { domain: yDomain(caps), nice: false } };
  const seriesNames = withCap.map((r) => r.series);
  const colour = runLegend(seriesNames);
  const curves = withCap.flatMap(({ c, series }) => c.fitted.map((f) => ({ series, load: f.load, attainment: f.attainment })));
  const points = withCap.flatMap(({ c, series }) => c.probes.map((p) => ({ series, load: p.load, attainment: p.attainment, outcome: outcomeOf(p) })));
  const bounds = withCap.flatMap(({ c, series }) => (c.feasibleMax === null ? [] : [{ series, load: c.feasibleMax }]));
  const targets = [...new Set(caps.map((c) => c.attainment))];
  const slos = [...new Set(caps.map((c) => sloLimitsText(c.slo)))];
  const title = 'Capacity — attainment against load';
  return {
    name,
    title,
    spec: {
      $schema: SCHEMA,
      title: { text: title, subtitle: wrapWords(`${targets.length === 1 ? `target ${targets[0]}% of requests` : `targets differ: ${targets.join('% / ')}%`} within ${slos.length === 1 ? slos[0] : `SLOs that differ (${slos.join(' / ')})`}; line: monotone fit; dashed vertical rule: each run's capacity (in the legend)`, SUBTITLE_CHARS) },
      width: WIDTH,
      height: 320,
      layer: [
        ...targets.flatMap((t) => targetLayers(t)),
        { data: { values: bounds }, mark: { type: 'rule', strokeWidth: 2, strokeDash: [4, 2] }, encoding: { x: { field: 'load', ...x }, color: colour, opacity: fade } },
        {
          data: { values: curves },
          params: legendPick,
          mark: { type: 'line', strokeWidth: 2 },
          encoding: { x: { field: 'load', ...x }, y: { field: 'attainment', ...y }, color: colour, order: { field: 'load', type: 'quantitative' }, opacity: fade },
        },
        {
          data: { values: points },
          mark: { type: 'point', filled: true, size: 70, tooltip: { content: 'data' } },
          encoding: {
            x: { field: 'load', ...x },
            y: { field: 'attainment', ...y },
            color: colour,
            shape: { field: 'outcome', type: 'nominal', title: 'probe', scale: shapeScale },
            opacity: fade,
          },
        },
      ],
      config: chartConfig,
    } as unknown as TopLevelSpec,
  };
}

/**
 * The capacity charts a bundle shows: `report` one per capacity run (`capacity.svg`, or `capacity-<id>.svg` when
 * it shows several); `compare` one overlay of every run's curve, one per axis when runs differ in it.
 */
export function capacityCharts(runs: readonly StoredRun[], names: readonly string[], kind: 'report' | 'compare'): ChartDef[] {
  const idx = runs.map((r, i) => (r.summary.capacity ? i : -1)).filter((i) => i >= 0);
  if (kind === 'report') {
    return idx.flatMap((i) => {
      const run = runs[i] as StoredRun;
      const chart = capacityChart(run, names[i] ?? run.id, idx.length === 1 ? 'capacity' : `capacity-${run.id}`);
      return chart ? [chart] : [];
    });
  }
  const units = [...new Set(idx.map((i) => runs[i]?.summary.capacity?.unit))];
  return units.flatMap((unit) => {
    const pick = idx.filter((i) => runs[i]?.summary.capacity?.unit === unit);
    const name = units.length === 1 ? 'capacity' : `capacity-${unit === 'streams' ? 'concurrency' : 'rate'}`;
    const chart = capacityCompareChart(pick.map((i) => runs[i] as StoredRun), pick.map((i) => names[i] ?? ''), name);
    return chart ? [chart] : [];
  });
}
