import { withPrediction } from './prediction-cell.js';
import type { CapacityResult } from '../load/capacity-types.js';
import { shortError } from '../core/short-error.js';
import type { Stats } from '../metrics/stats.js';
import { MIN_PERCENTILE_SAMPLES, type StageSummary } from '../metrics/summary.js';
import { withReasoningColumns } from './reasoning-columns.js';
import { INTERRUPTED_MARK, okSentCell, stoppedBeforeMeasuring, stoppedFailureText } from './row-status.js';
import type { Table } from './table.js';
import type { TableContext } from '../results/run-summary.js';
import type { ServerTelemetry } from '../results/stage.js';
import { avgWattsCell, jPerTokenCell } from './energy-notes.js';

export type { TableContext } from '../results/run-summary.js';

/** Two decimals and the unit; an absent or unmeasured figure (undefined, NaN) is "—", never "NaN" or a made-up 0.00. */
export const f2 = (n: number | undefined, unit = ''): string => (n === undefined || !Number.isFinite(n) ? '—' : `${n.toFixed(2)}${unit}`);

/** Sort key: synchronous first, then by target rate / concurrency, throughput last (design.md §2). */
export function sweepOrder(s: StageSummary): number {
  if (s.label === 'synchronous') return -1;
  if (s.kind === 'burst') return Number.MAX_VALUE;
  return s.targetRate ?? s.concurrency ?? 0;
}

export function failureCell(s: StageSummary): string {
  if (stoppedBeforeMeasuring(s)) return stoppedFailureText(s);
  if (s.requests.total === 0) return 'no requests';
  const codes = Object.entries(s.errorsByCode)
    .sort((a, b) => b[1] - a[1])
    .map(([code, n]) => `${code}×${n}`)
    .join(' ');
  const failed = s.requests.errors > 0 ? `${s.requests.errors}/${s.requests.ok + s.requests.errors} (${Math.round(s.failureShare * 100)}%) ${codes}` : '0';
  const cut = s.requests.incomplete > 0 ? `; ${s.requests.incomplete} cut` : '';
  // Requests resent once on a fresh connection (the server had closed the kept-alive one): not failures.
  const retried = s.requests.retried ? `; ${s.requests.retried} retried` : '';
  return `${failed}${cut}${retried}`;
}

/** Why a row has no figures: said under the table, never in a numeric column. */
export function noneFinished(s: StageSummary): string {
  if (s.requests.total === 0) return 'sent no measured request';
  if (s.requests.errors === 0 && s.requests.incomplete > 0 && s.interrupted) {
    return `none finished before the interruption: ${s.requests.incomplete} cut (continue the run with --resume)`;
  }
  if (s.requests.errors === 0 && s.requests.incomplete > 0) {
    return `none finished: ${s.requests.incomplete} cut (${s.firstError ? shortError(s.firstError) : 'stopped'}; raise --max-seconds or --drain)`;
  }
  return `all failed: ${s.firstError ? shortError(s.firstError) : 'no request completed'}`;
}

/** Marks after a row's label; each is explained under the table (rowMarkLegend). */
export function rowMarks(s: StageSummary): string {
  let m = '';
  if (s.belowTarget) m += '*';
  if (s.unintendedCache) m += '‡';
  if (s.idleWait && !s.idleWait.idle) m += '§';
  if (s.steadyWarnings?.some((w) => !w.includes('fewer than'))) m += '~';
  // Figures from the requests finished before a Ctrl-C: marked in words, explained under the table (row-status.ts).
  if (s.interrupted && s.requests.ok > 0) m += `${m ? ' ' : ''}${INTERRUPTED_MARK}`;
  return m ? `${s.label} ${m}` : s.label;
}

/** A percentile cell: "—" when unmeasured, a † when it rests on fewer than MIN_PERCENTILE_SAMPLES values. */
export function pct(st: Stats | undefined, unit: string, pick: 'median' | 'p90' | 'p95' | 'p99' = 'p99'): string {
  if (!st) return '—';
  const cell = f2(st[pick], unit);
  return st.count < MIN_PERCENTILE_SAMPLES && cell !== '—' ? `${cell} †` : cell;
}

/** With `--repeat N`: the figure's mean ± its 95% half-width over the repeats (metrics/repeats.ts); else `plain`. */
export function withInterval(s: StageSummary, key: string, plain: string, unit: string, scale = 1, value?: number): string {
  const ci = s.intervals?.[key];
  if (ci && ci.n > 1) return `${f2(ci.mean * scale)} ± ${f2(ci.halfWidth * scale)}${unit}`;
  // A predicted row: the figure and its prediction interval (prediction-cell.ts).
  return (value !== undefined ? withPrediction(s, key, value, unit) : undefined) ?? plain;
}

/**
 * "ok/sent" of the measured requests (the ramp-up is counted apart, in summary.json); a row stopped as over-saturated
 * before a measured success shows every request it sent instead: "88/135 before stop" (row-status.ts).
 */
export const samples = (s: StageSummary): string => okSentCell(s);

/** A grid cell's "ok/sent": grids have no row label to mark, so an interrupted cell's mark goes here. */
export const cellSamples = (s: StageSummary): string => `${okSentCell(s)}${s.interrupted && s.requests.ok > 0 ? ` ${INTERRUPTED_MARK}` : ''}`;

/** The run measured an embeddings API (its rows count inputs per request). */
export const isEmbeddingsRun = (stages: readonly StageSummary[]): boolean => stages.some((s) => s.inputsPerRequest !== undefined);

/** Seed 003 layout, plus p99 columns, sample counts and the failure share (never a silent 0.00). */
export function sweepTable(stages: readonly StageSummary[], opts: { capacity?: CapacityResult } = {}): Table {
  if (isEmbeddingsRun(stages)) return embeddingsTable(stages, opts);
  const ordered = [...stages].sort((a, b) => sweepOrder(a) - sweepOrder(b));
  const rows = ordered.map((s) => {
    const m = s.metrics;
    const label = rowMarks(s);
    if (s.requests.ok === 0) return [label, '—', '—', '—', '—', '—', '—', '—', samples(s), failureCell(s)];
    return [
      label,
      withInterval(s, 'requestThroughput', f2(s.requestThroughput, ' req/sec'), ' req/sec', 1, s.requestThroughput),
      withInterval(s, 'e2eMean', f2(m.e2eMs ? m.e2eMs.mean / 1000 : undefined, ' sec'), ' sec', 1 / 1000, m.e2eMs ? m.e2eMs.mean / 1000 : undefined),
      withInterval(s, 'ttftMean', f2(m.ttftMs?.mean, ' ms'), ' ms', 1, m.ttftMs?.mean),
      withInterval(s, 'itlMean', f2(m.itlMs?.mean, ' ms'), ' ms', 1, m.itlMs?.mean),
      withInterval(s, 'outputTokenThroughput', f2(s.outputTokenThroughput, ' tokens/sec'), ' tokens/sec', 1, s.outputTokenThroughput),
      // p99 cells carry no prediction interval: the held-out residuals are of means, not of tail percentiles.
      withInterval(s, 'ttftP99', pct(m.ttftMs, ' ms'), ' ms'),
      withInterval(s, 'itlP99', pct(m.itlMs, ' ms'), ' ms'),
      samples(s),
      failureCell(s),
    ];
  });
  return withServerColumn(withSloColumn(withReasoningColumns({
    headers: [
      'Benchmark',
      'Requests per Second',
      'Request Latency',
      'Time to First Token',
      'Inter Token Latency',
      'Output Token Throughput',
      'TTFT p99',
      'ITL p99',
      'Requests ok/sent',
      'Failed',
    ],
    rows,
  }, ordered, 'Time to First Token', ' ms'), ordered, opts.capacity), ordered);
}


/**
 * Embeddings rows: the seed layout's TTFT, ITL and output columns would be empty (a reply of vectors has no tokens to
 * time), so throughput is in requests, texts and input tokens, and latency is end to end.
 */
function embeddingsTable(stages: readonly StageSummary[], opts: { capacity?: CapacityResult }): Table {
  const ordered = [...stages].sort((a, b) => sweepOrder(a) - sweepOrder(b));
  const rows = ordered.map((s) => {
    const e2e = s.metrics.e2eMs;
    if (s.requests.ok === 0) return [rowMarks(s), '—', '—', '—', '—', '—', '—', samples(s), failureCell(s)];
    return [
      rowMarks(s),
      withInterval(s, 'requestThroughput', f2(s.requestThroughput, ' req/sec'), ' req/sec'),
      withInterval(s, 'inputThroughput', f2(s.inputThroughput, ' inputs/sec'), ' inputs/sec'),
      withInterval(s, 'promptTokenThroughput', f2(s.promptTokenThroughput, ' tokens/sec'), ' tokens/sec'),
      withInterval(s, 'e2eMean', f2(e2e?.mean, ' ms'), ' ms'),
      pct(e2e, ' ms', 'median'),
      withInterval(s, 'e2eP99', pct(e2e, ' ms'), ' ms'),
      samples(s),
      failureCell(s),
    ];
  });
  const headers = ['Benchmark', 'Requests per Second', 'Inputs per Second', 'Input Token Throughput', 'Request Latency', 'Latency p50', 'Latency p99', 'Requests ok/sent', 'Failed'];
  return withServerColumn(withSloColumn({ headers, rows }, ordered, opts.capacity), ordered);
}

/**
 * With --slo: the share of each row's requests that met every limit (failed and cut requests are misses); a capacity
 * run also marks each probe against its attainment target.
 */
function withSloColumn(table: Table, rowStages: readonly StageSummary[], capacity: CapacityResult | undefined): Table {
  if (!rowStages.some((s) => s.sloAttainment)) return table;
  return {
    headers: [...table.headers, sloHeader(capacity)],
    rows: table.rows.map((r, i) => [...r, sloCell(rowStages[i] as StageSummary, capacity)]),
  };
}

export const sloHeader = (capacity: CapacityResult | undefined): string => (capacity === undefined ? 'Met SLO' : `Met SLO (target ${capacity.attainment}%)`);

/** "93.0% of 57"; a capacity probe adds its verdict: "pass 100.0% of 20", "FAIL 80.0% of 20 (did not keep up)". */
export function sloCell(s: StageSummary, capacity: CapacityResult | undefined): string {
  const a = s.sloAttainment;
  if (!a) return '—';
  const share = `${a.percent.toFixed(1)}% of ${a.of}`;
  const probe = capacity?.probes.find((p) => p.stage === s.index);
  if (!probe) return share;
  return `${probe.pass ? 'pass' : 'FAIL'} ${share}${probe.overSaturated !== undefined ? ' (did not keep up)' : ''}`;
}

/** A grid cell: its throughput burst and its low-load latency pass (older runs have the burst only). */
export interface GridCell {
  input: number;
  output: number;
  throughput?: StageSummary;
  latency?: StageSummary;
}

/** Pairs a grid run's stages into cells, in run order. */
export function gridCells(stages: readonly StageSummary[]): GridCell[] {
  const cells = new Map<string, GridCell>();
  for (const s of stages) {
    const [inText = '', outText = ''] = s.label.replace(/ latency$/, '').split('/');
    const input = s.grid?.input ?? Number(inText);
    const output = s.grid?.output ?? Number(outText);
    const key = `${input}/${output}`;
    const cell = cells.get(key) ?? { input, output };
    if ((s.grid?.role ?? 'throughput') === 'latency') cell.latency = s;
    else cell.throughput = s;
    cells.set(key, cell);
  }
  return [...cells.values()];
}

/**
 * The stage a cell's latency columns come from: its low-load pass. Only a run made before grids had latency passes
 * (its bursts carry no `grid.role`) reads them from the burst; a cell whose pass has not run yet (a run in
 * progress) or never finished has none, and its latency columns show — rather than the burst's queueing figures.
 */
export function cellLatencyStage(c: GridCell): StageSummary | undefined {
  if (c.latency) return c.latency;
  return c.throughput?.grid?.role === 'throughput' ? undefined : c.throughput;
}

/**
 * Seeds 000–002/004 layout: one row per input × output cell. Throughput columns come from the cell's burst,
 * latency columns (per token, per output token, TTFT, ITL) from its low-load pass, as the seeds measured them.
 */
export function gridTable(stages: readonly StageSummary[]): Table {
  const cells = gridCells(stages);
  const rows = cells.map((c) => {
    const t = c.throughput;
    const l = cellLatencyStage(c);
    const lm = l && l.requests.ok > 0 ? l.metrics : undefined;
    const tOk = t !== undefined && t.requests.ok > 0;
    const failed = [t, c.latency].filter((s): s is StageSummary => s !== undefined).map(failureCell);
    return [
      String(c.input),
      String(c.output),
      tOk ? f2(t.requestThroughput) : '—',
      tOk ? f2(t.outputTokenThroughput) : '—',
      f2(lm?.latencyPerTokenMs?.mean),
      f2(lm?.latencyPerOutputTokenMs?.mean),
      f2(lm?.ttftMs?.mean),
      f2(lm?.itlMs?.mean),
      [t, c.latency].map((s) => (s ? cellSamples(s) : '—')).join(' · '),
      failed.every((f) => f === '0') ? '0' : failed.join(' · '),
    ];
  });
  return withServerColumn(withReasoningColumns({
    headers: [
      'Input Length',
      'Output Length',
      'Throughput (requests/s)',
      'Throughput (output token/s)',
      'Average latency per token (ms)',
      'Average latency per output token (ms)',
      'Time to First Token (ms)',
      'Inter Token Latency (ms)',
      'Requests ok/sent (burst · latency)',
      'Failed',
    ],
    rows,
  }, cells.map((c) => c.latency ?? c.throughput), 'Time to First Token (ms)', ''), cells.map((c) => (c.throughput ?? c.latency) as StageSummary));
}

/** When the server exposed /metrics: its own running / waiting requests and KV-cache use at the window's peak (serverGaugesText). */
function withServerColumn(table: Table, rowStages: readonly StageSummary[]): Table {
  if (!rowStages.some((s) => s.server)) return withEnergyColumns(table, rowStages);
  return withEnergyColumns({
    headers: [...table.headers, SERVER_GAUGES_HEADER],
    rows: table.rows.map((r, i) => [...r, serverCell(rowStages[i] as StageSummary)]),
  }, rowStages);
}

/** `--power` (or a prediction): GPU energy per output token and mean power over each row's window. */
function withEnergyColumns(table: Table, rowStages: readonly StageSummary[]): Table {
  if (!rowStages.some((s) => s.energy && s.energy.source !== 'simulator')) return table;
  const cells = (s: StageSummary | undefined): string[] => {
    const e = s?.energy;
    return [jPerTokenCell(e), avgWattsCell(e)];
  };
  return {
    headers: [...table.headers, 'J/token', 'Avg W'],
    rows: table.rows.map((r, i) => [...r, ...cells(rowStages[i])]),
  };
}

/** The gauge column's header, the same in the terminal, table.md and the HTML report. */
export const SERVER_GAUGES_HEADER = 'Server peak run/wait/KV';

/** A row's server gauges (its /metrics, or its replicas' added up): "50 / 0 / 6%" (serverGaugesText). */
export function serverCell(s: StageSummary | undefined): string {
  return serverGaugesText(s?.server);
}

/**
 * The server's gauges over the measured window: running / waiting at its busiest reading (the most requests
 * running + waiting: one moment, so the two add up to what it held), then the window's peak KV-cache use. Runs saved
 * before the window was recorded show their whole-row peaks, as they always did.
 */
export function serverGaugesText(v: ServerTelemetry | undefined): string {
  if (!v) return '—';
  const pct = (x: number | undefined): string => (x !== undefined ? `${(x * 100).toFixed(0)}%` : '—');
  const w = v.window;
  // One sample is a single instant, not the window's peak: fewer than two say nothing about it.
  if (w) return w.samples < 2 ? '—' : `${w.runningAtPeak ?? '—'} / ${w.waitingAtPeak ?? '—'} / ${pct(w.peakKvUsage)}`;
  if (v.samples < 2) return '—';
  return `${v.peakRunning ?? '—'} / ${v.peakWaiting ?? '—'} / ${pct(v.peakKvUsage)}`;
}

/** The line above a sweep table, as seed 003 writes it. */
export function sweepHeader(ctx: TableContext): string {
  const gpus = ctx.gpus ?? 1;
  const hw = ctx.gpu ? `**${gpus}**×**${ctx.gpu}**, ` : '';
  const quant = ctx.quant ? ` (${ctx.quant})` : '';
  const tokens =
    ctx.promptTokens !== undefined
      ? `, prompt_tokens=${ctx.promptTokens}, generated_tokens=${ctx.outputTokens ?? '?'}`
      : ctx.lengths
        ? `, ${ctx.lengths}`
        : '';
  const tag = ctx.predicted ? ' — predicted by the simulator' : '';
  return `- **${ctx.model}**${quant}, ${hw}**${ctx.engine}${ctx.engineVersion ? ` ${ctx.engineVersion}` : ''}**${tokens}${tag}`;
}

/** The headings above a grid table, as seeds 000/002/004 write them. */
export function gridHeader(ctx: TableContext): string {
  const lines = [`# ${ctx.model}${ctx.quant ? ` (${ctx.quant})` : ''}`, ''];
  // The GPU count always, one included: a grid from 1 GPU and one from 2 must not read alike.
  if (ctx.gpu) lines.push(`## ${ctx.gpus ?? 1}× ${ctx.gpu}`, '');
  lines.push(`## ${ctx.engine}${ctx.engineVersion ? ` ${ctx.engineVersion}` : ''}${ctx.predicted ? ' (predicted)' : ''}`);
  return lines.join('\n');
}
