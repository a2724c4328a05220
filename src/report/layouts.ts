import type { StageSummary } from '../metrics/summary.js';
import type { Table } from './table.js';

/** What the header line above a table names. */
export interface TableContext {
  model: string;
  engine: string;
  engineVersion?: string;
  gpu?: string;
  gpus?: number;
  quant?: string;
  promptTokens?: number;
  outputTokens?: number;
  /** Used instead of prompt/output tokens when lengths vary (distributions, datasets, traces). */
  lengths?: string;
  /** Figures come from the simulator in virtual time, not from a measurement. */
  predicted?: boolean;
  label?: string;
}

const f2 = (n: number): string => n.toFixed(2);

/** Sort key: synchronous first, then by target rate / concurrency, throughput last (design.md §2). */
export function sweepOrder(s: StageSummary): number {
  if (s.label === 'synchronous') return -1;
  if (s.kind === 'burst') return Number.MAX_VALUE;
  return s.targetRate ?? s.concurrency ?? 0;
}

function failureCell(s: StageSummary): string {
  if (s.requests.total === 0) return 'no requests';
  const codes = Object.entries(s.errorsByCode)
    .sort((a, b) => b[1] - a[1])
    .map(([code, n]) => `${code}×${n}`)
    .join(' ');
  const failed = s.requests.errors > 0 ? `${s.requests.errors}/${s.requests.ok + s.requests.errors} (${Math.round(s.failureShare * 100)}%) ${codes}` : '0';
  return s.requests.incomplete > 0 ? `${failed}; ${s.requests.incomplete} cut` : failed;
}

/** What a row with no successful request shows in place of figures: why, never a 0.00. */
function noneFinished(s: StageSummary): string {
  if (s.requests.errors === 0 && s.requests.incomplete > 0) {
    return `none finished: ${s.requests.incomplete} cut (${s.firstError ?? 'stopped'}; raise --max-seconds or --drain)`;
  }
  return `all failed: ${s.firstError ?? 'no request completed'}`;
}

/** Seed 003 layout, plus p99 columns and the failure share (never a silent 0.00). */
export function sweepTable(stages: readonly StageSummary[]): Table {
  const ordered = [...stages].sort((a, b) => sweepOrder(a) - sweepOrder(b));
  const rows = ordered.map((s) => {
    const m = s.metrics;
    const label = s.belowTarget ? `${s.label} *` : s.label;
    if (s.requests.ok === 0) return [label, noneFinished(s), '—', '—', '—', '—', '—', '—', failureCell(s)];
    return [
      label,
      `${f2(s.requestThroughput)} req/sec`,
      `${f2((m.e2eMs?.mean ?? NaN) / 1000)} sec`,
      `${f2(m.ttftMs?.mean ?? NaN)} ms`,
      `${f2(m.itlMs?.mean ?? NaN)} ms`,
      `${f2(s.outputTokenThroughput)} tokens/sec`,
      `${f2(m.ttftMs?.p99 ?? NaN)} ms`,
      `${f2(m.itlMs?.p99 ?? NaN)} ms`,
      failureCell(s),
    ];
  });
  return withServerColumn({
    headers: [
      'Benchmark',
      'Requests per Second',
      'Request Latency',
      'Time to First Token',
      'Inter Token Latency',
      'Output Token Throughput',
      'TTFT p99',
      'ITL p99',
      'Failed',
    ],
    rows,
  }, ordered);
}

/** Seeds 000–002/004 layout: one row per input × output cell. */
export function gridTable(stages: readonly StageSummary[]): Table {
  const rows = stages.map((s) => {
    const [input = '', output = ''] = s.label.split('/');
    const m = s.metrics;
    if (s.requests.ok === 0) return [input, output, noneFinished(s), '—', '—', '—', failureCell(s)];
    return [
      input,
      output,
      f2(s.requestThroughput),
      f2(s.outputTokenThroughput),
      f2(m.latencyPerTokenMs?.mean ?? NaN),
      f2(m.latencyPerOutputTokenMs?.mean ?? NaN),
      failureCell(s),
    ];
  });
  return withServerColumn({
    headers: [
      'Input Length',
      'Output Length',
      'Throughput (requests/s)',
      'Throughput (output token/s)',
      'Average latency per token (ms)',
      'Average latency per output token (ms)',
      'Failed',
    ],
    rows,
  }, stages);
}

/** When the server exposed /metrics: its own peak running / waiting requests and KV-cache use per row. */
function withServerColumn(table: Table, rowStages: readonly StageSummary[]): Table {
  if (!rowStages.some((s) => s.server)) return table;
  const cell = (s: StageSummary): string => {
    const v = s.server;
    if (!v) return '—';
    const kv = v.peakKvUsage !== undefined ? `${(v.peakKvUsage * 100).toFixed(0)}%` : '—';
    return `${v.peakRunning ?? '—'} / ${v.peakWaiting ?? '—'} / ${kv}`;
  };
  return {
    headers: [...table.headers, 'Server peak run / wait / KV'],
    rows: table.rows.map((r, i) => [...r, cell(rowStages[i] as StageSummary)]),
  };
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
  if (ctx.gpu) lines.push(`## ${(ctx.gpus ?? 1) > 1 ? `${ctx.gpus}× ` : ''}${ctx.gpu}`, '');
  lines.push(`## ${ctx.engine}${ctx.engineVersion ? ` ${ctx.engineVersion}` : ''}${ctx.predicted ? ' (predicted)' : ''}`);
  return lines.join('\n');
}
