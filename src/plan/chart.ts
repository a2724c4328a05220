/**
 * The plan's Pareto chart: each searched configuration at its capacity under the SLO, output tokens/s per GPU
 * (what a GPU earns) against output tokens/s per user (how fast one answer streams), the frontier joined.
 */
import type { TopLevelSpec } from 'vega-lite';
import { CHART_FONT } from '../report/charts/render.js';
import type { ChartDef } from '../report/charts/specs.js';
import { shapeLabel } from './render.js';
import type { PlanCandidate, PlanResult } from './types.js';

export interface ParetoPoint {
  label: string;
  engine: string;
  quant: string;
  perUser: number;
  perGpu: number;
  capacity: number;
  costPerMillion: number | null;
  rank: number | null;
  frontier: boolean;
}

/** Points of every candidate with a capacity; `frontier` marks those no other point beats on both axes. */
export function paretoPoints(candidates: readonly PlanCandidate[]): ParetoPoint[] {
  const pts: ParetoPoint[] = [];
  for (const c of candidates) {
    const a = c.atCapacity;
    if (!a || a.outputTokensPerSPerUser === null || c.capacityPerReplica === null) continue;
    pts.push({
      label: shapeLabel(c),
      engine: c.engine,
      quant: c.quant,
      perUser: a.outputTokensPerSPerUser,
      perGpu: a.outputTokensPerSPerGpu,
      capacity: c.capacityPerReplica,
      costPerMillion: c.costPerMillionOutputTokens,
      rank: c.rank ?? null,
      frontier: false,
    });
  }
  for (const p of pts) {
    p.frontier = !pts.some((q) => q !== p && q.perUser >= p.perUser && q.perGpu >= p.perGpu && (q.perUser > p.perUser || q.perGpu > p.perGpu));
  }
  return pts;
}

const config = {
  font: CHART_FONT,
  background: 'white',
  title: { fontSize: 15, anchor: 'start' as const, subtitleFontSize: 11, subtitleColor: '#555' },
  axis: { labelFontSize: 11, titleFontSize: 12, grid: true, gridColor: '#e6e6e6' },
  legend: { orient: 'right' as const, labelFontSize: 11, titleFontSize: 12 },
  view: { stroke: '#ccc' },
};

export function paretoChart(plan: PlanResult): ChartDef {
  const points = paretoPoints(plan.candidates);
  const frontier = points.filter((p) => p.frontier).sort((a, b) => a.perUser - b.perUser);
  const top = points.filter((p) => p.rank === 1);
  const x = { field: 'perUser', type: 'quantitative' as const, title: 'output tokens/s per user (1000 / mean ITL)', scale: { zero: false } };
  const y = { field: 'perGpu', type: 'quantitative' as const, title: 'output tokens/s per GPU at capacity', scale: { zero: false } };
  const tooltip = [
    { field: 'label', title: 'configuration' },
    { field: 'capacity', title: 'capacity/replica (req/s)', format: '.2f' },
    { field: 'perGpu', title: 'tok/s per GPU at capacity', format: '.1f' },
    { field: 'perUser', title: 'tok/s per user', format: '.1f' },
    { field: 'costPerMillion', title: '$ per 1M output tokens', format: '.3f' },
    { field: 'rank', title: 'rank' },
  ];
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: `${plan.model}: throughput per GPU vs speed per user`,
      subtitle: [
        `each configuration at its capacity under the SLO (${plan.attainment}% of requests within the limits)${plan.counts.pruned > 0 ? `; ${plan.counts.pruned} pruned by cost not drawn (--exhaustive)` : ''}`,
        `dashed: Pareto frontier; red ring: the cheapest deployment at ${+plan.rate.toFixed(3)} req/s`,
      ],
    },
    width: 620,
    height: 380,
    layer: [
      {
        data: { values: frontier },
        mark: { type: 'line', color: '#888', strokeDash: [4, 3] },
        encoding: { x, y, order: { field: 'perUser', type: 'quantitative' } },
      },
      {
        data: { values: points },
        mark: { type: 'point', filled: true, size: 70, opacity: 0.85 },
        encoding: {
          x,
          y,
          color: { field: 'engine', type: 'nominal', title: 'engine', scale: { scheme: 'tableau10' } },
          shape: { field: 'quant', type: 'nominal', title: 'quantization' },
          tooltip,
        },
      },
      {
        data: { values: top },
        mark: { type: 'point', size: 400, strokeWidth: 2.5, color: '#d62728', filled: false },
        encoding: { x, y, tooltip },
      },
    ],
    config,
  };
  return { name: 'pareto', title: 'Pareto: tokens/s per GPU vs tokens/s per user', spec: spec as unknown as TopLevelSpec };
}
