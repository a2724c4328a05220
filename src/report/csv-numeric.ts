import type { CapacityResult } from '../load/capacity-types.js';
import type { MetricName, StageSummary } from '../results/index.js';
import type { Stats } from '../results/stats.js';
import { reportRows, type ReportRow } from './report-rows.js';
import { requestsBeforeStop } from './row-status.js';
import { renderCsv } from './table.js';

/**
 * table.csv: one number per cell, the unit in each snake_case header, so a spreadsheet or pandas reads it without
 * parsing "0.57 req/sec". An unmeasured figure is an empty cell; yes/no figures are 1/0. Sweeps and grids share
 * every column after their identifying ones (sweep: row, kind, target_rate_rps, concurrency; grid: input_tokens,
 * output_tokens); a grid row's throughput and counts come from its burst, its latencies from its low-load pass,
 * whose own counts are the latency_pass_* columns.
 */
type Cell = number | boolean | string | undefined;
interface NumericColumn {
  header: string;
  value: (r: ReportRow, capacity: CapacityResult | undefined) => Cell;
}

const ok = (s: StageSummary | undefined): s is StageSummary => s !== undefined && s.requests.ok > 0;
const STAT_PICKS = [
  ['mean', 'mean'],
  ['p50', 'median'],
  ['p90', 'p90'],
  ['p95', 'p95'],
  ['p99', 'p99'],
] as const satisfies readonly (readonly [string, keyof Stats])[];
const LATENCY_METRICS = [
  ['ttft', 'ttftMs'],
  ['itl', 'itlMs'],
  ['e2e', 'e2eMs'],
  ['latency_per_token', 'latencyPerTokenMs'],
  ['latency_per_output_token', 'latencyPerOutputTokenMs'],
] as const satisfies readonly (readonly [string, MetricName])[];

const tput = (header: string, pick: (s: StageSummary) => Cell): NumericColumn => ({ header, value: (r) => (ok(r.throughput) ? pick(r.throughput) : undefined) });
const counts = (header: string, pick: (s: StageSummary) => Cell): NumericColumn => ({ header, value: (r) => (r.throughput ? pick(r.throughput) : undefined) });

const SHARED: readonly NumericColumn[] = [
  tput('requests_per_s', (s) => s.requestThroughput),
  tput('send_rate_rps', (s) => s.sendRate),
  tput('output_tokens_per_s', (s) => s.outputTokenThroughput),
  tput('prompt_tokens_per_s', (s) => s.promptTokenThroughput),
  tput('total_tokens_per_s', (s) => s.totalTokenThroughput),
  tput('mean_in_flight', (s) => s.meanConcurrency),
  ...LATENCY_METRICS.flatMap(([name, metric]) =>
    STAT_PICKS.map(([stat, pick]) => ({ header: `${name}_${stat}_ms`, value: (r: ReportRow) => (ok(r.latency) ? r.latency.metrics[metric]?.[pick] : undefined) })),
  ),
  { header: 'ttft_samples', value: (r) => (ok(r.latency) ? (r.latency.metrics.ttftMs?.count ?? 0) : undefined) },
  counts('n_sent', (s) => s.requests.total),
  counts('n_ok', (s) => s.requests.ok),
  counts('n_failed', (s) => s.requests.errors),
  counts('n_incomplete', (s) => s.requests.incomplete),
  counts('n_warmup', (s) => s.requests.warmup),
  counts('failure_share_pct', (s) => s.failureShare * 100),
  counts('window_s', (s) => s.durationS),
  counts('below_target', (s) => s.belowTarget),
  counts('over_saturated', (s) => s.overSaturated !== undefined),
  // A row that stopped early: every request it sent, ramp-up included, and those that succeeded (row-status.ts).
  counts('n_sent_before_stop', (s) => (s.overSaturated !== undefined || s.stoppedEarly !== undefined ? requestsBeforeStop(s).sent : undefined)),
  counts('n_ok_before_stop', (s) => (s.overSaturated !== undefined || s.stoppedEarly !== undefined ? requestsBeforeStop(s).ok : undefined)),
  counts('interrupted', (s) => s.interrupted),
  counts('goodput_rps', (s) => s.goodput?.requestsPerS),
  counts('slo_attainment_pct', (s) => s.sloAttainment?.percent),
  counts('slo_met', (s) => s.sloAttainment?.met),
  { header: 'capacity_pass', value: (r, capacity) => capacity?.probes.find((p) => p.stage === r.throughput?.index)?.pass },
  counts('server_peak_running', (s) => s.server?.peakRunning),
  counts('server_peak_waiting', (s) => s.server?.peakWaiting),
  counts('server_peak_kv_usage_pct', (s) => (s.server?.peakKvUsage !== undefined ? s.server.peakKvUsage * 100 : undefined)),
  // The server_peak_* columns above cover the whole row (a throughput row's cap search included, each its own maximum);
  // these, the measured window alone: running and waiting at its busiest reading, as the table's gauge column.
  counts('server_window_running_at_peak', (s) => s.server?.window?.runningAtPeak),
  counts('server_window_waiting_at_peak', (s) => s.server?.window?.waitingAtPeak),
  counts('server_window_mean_running', (s) => s.server?.window?.meanRunning),
  counts('server_window_mean_waiting', (s) => s.server?.window?.meanWaiting),
  counts('server_window_peak_kv_usage_pct', (s) => (s.server?.window?.peakKvUsage !== undefined ? s.server.window.peakKvUsage * 100 : undefined)),
];

const SWEEP_ID: readonly NumericColumn[] = [
  { header: 'row', value: (r) => r.label },
  { header: 'kind', value: (r) => r.throughput?.kind },
  { header: 'target_rate_rps', value: (r) => r.throughput?.targetRate },
  { header: 'concurrency', value: (r) => r.throughput?.concurrency },
];

const pass = (r: ReportRow): StageSummary | undefined => r.stages.find((s) => s.grid?.role === 'latency');
const GRID_ID: readonly NumericColumn[] = [
  { header: 'input_tokens', value: (r) => r.input },
  { header: 'output_tokens', value: (r) => r.output },
];
const GRID_PASS: readonly NumericColumn[] = [
  { header: 'latency_pass_n_sent', value: (r) => pass(r)?.requests.total },
  { header: 'latency_pass_n_ok', value: (r) => pass(r)?.requests.ok },
  { header: 'latency_pass_n_failed', value: (r) => pass(r)?.requests.errors },
];

/** Full precision (no rounding: this file is for computing on), integers as integers, empty when unmeasured. */
function cell(v: Cell): string {
  if (v === undefined) return '';
  if (typeof v === 'boolean') return v ? '1' : '0';
  if (typeof v === 'string') return v;
  return Number.isFinite(v) ? String(Number.isInteger(v) ? v : Number(v.toPrecision(10))) : '';
}

/** The numeric table of one run: headers and rows of cells as written. */
export function numericTable(layout: 'sweep' | 'grid', stages: readonly StageSummary[], capacity?: CapacityResult): { headers: string[]; rows: string[][] } {
  const columns = layout === 'grid' ? [...GRID_ID, ...SHARED, ...GRID_PASS] : [...SWEEP_ID, ...SHARED];
  // Embeddings runs: texts per request and texts per second (other runs keep their columns as they were).
  if (stages.some((s) => s.inputsPerRequest !== undefined)) columns.push(counts('inputs_per_request', (s) => s.inputsPerRequest), tput('inputs_per_s', (s) => s.inputThroughput));
  return {
    headers: columns.map((c) => c.header),
    rows: reportRows(layout, stages).map((r) => columns.map((c) => cell(c.value(r, capacity)))),
  };
}

export function renderNumericCsv(layout: 'sweep' | 'grid', stages: readonly StageSummary[], capacity?: CapacityResult): string {
  return renderCsv(numericTable(layout, stages, capacity));
}
