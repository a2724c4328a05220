import { configError } from '../core/errors.js';
import type { CapacityResult } from '../load/capacity-types.js';
import type { MetricName, StageSummary } from '../results/index.js';
import { cacheBeyondChance } from '../metrics/cache-chance.js';
import { cellSamples, f2, failureCell, isEmbeddingsRun, pct, samples, SERVER_GAUGES_HEADER, serverCell, sloCell, sloHeader } from './layouts.js';
import type { ReportRow } from './report-rows.js';
import { withPrediction } from './prediction-cell.js';
import { avgWattsCell, jPerTokenCell } from './energy-notes.js';

/** What a column needs besides its row. */
export interface ColumnContext {
  layout: 'sweep' | 'grid';
  capacity?: CapacityResult;
}

/** A terminal table column: `--columns` names it; units live in the header so cells are plain numbers. */
export interface TerminalColumn {
  name: string;
  header: (ctx: ColumnContext) => string;
  /** One line for the docs and the unknown-column error. */
  help: string;
  cell: (row: ReportRow, ctx: ColumnContext) => string;
}

const hasOk = (s: StageSummary | undefined): s is StageSummary => s !== undefined && s.requests.ok > 0;
/** A figure, or with `--repeat N` its mean ± the 95% half-width over the repeats (metrics/repeats.ts). */
function figure(s: StageSummary, pick: (s: StageSummary) => number | undefined, repeatKey?: string, scale = 1): string {
  const ci = repeatKey !== undefined ? s.intervals?.[repeatKey] : undefined;
  if (ci && ci.n > 1) return `${f2(ci.mean * scale)} ± ${f2(ci.halfWidth * scale)}`;
  // A predicted row: the figure and its prediction interval (prediction-cell.ts).
  return (repeatKey !== undefined ? withPrediction(s, repeatKey, pick(s)) : undefined) ?? f2(pick(s));
}
/** Figures of the throughput stage (sweep: the row; grid: the burst), — when nothing completed. */
const tput = (pick: (s: StageSummary) => number | undefined, repeatKey?: string) => (r: ReportRow): string =>
  hasOk(r.throughput) ? figure(r.throughput, pick, repeatKey) : '—';
/** Figures of the latency stage (sweep: the row; grid: the low-load pass). */
const lat = (pick: (s: StageSummary) => number | undefined, repeatKey?: string, scale = 1) => (r: ReportRow): string =>
  hasOk(r.latency) ? figure(r.latency, pick, repeatKey, scale) : '—';
const fixed = (h: string) => (): string => h;

const PERCENTILES = [
  ['p50', 'median'],
  ['p90', 'p90'],
  ['p95', 'p95'],
  ['p99', 'p99'],
] as const;
const PERCENTILE_METRICS = [
  ['ttft', 'ttftMs', 'TTFT'],
  ['itl', 'itlMs', 'ITL'],
  ['e2e', 'e2eMs', 'E2E'],
] as const satisfies readonly (readonly [string, MetricName, string])[];

function percentileColumns(): TerminalColumn[] {
  return PERCENTILE_METRICS.flatMap(([key, metric, label]) =>
    PERCENTILES.map(([p, pick]) => ({
      name: `${key}-${p}`,
      header: fixed(`${label} ${p} (ms)`),
      help: `${label} ${p} in ms († when from fewer than 20 samples)`,
      cell: (r: ReportRow) => {
        if (!hasOk(r.latency)) return '—';
        const ci = p === 'p99' ? r.latency.intervals?.[`${key}P99`] : undefined;
        if (ci && ci.n > 1) return `${f2(ci.mean)} ± ${f2(ci.halfWidth)}`;
        const st = r.latency.metrics[metric];
        // No prediction interval on percentiles: the held-out residuals are of means, not of tail percentiles.
        return pct(st, '', pick);
      },
    })),
  );
}

/** Every column `--columns` can name, in the order `all` prints them. */
export const TERMINAL_COLUMNS: readonly TerminalColumn[] = [
  { name: 'rps', header: fixed('req/s'), help: 'achieved request throughput, req/s', cell: tput((s) => s.requestThroughput, 'requestThroughput') },
  { name: 'send-rate', header: fixed('Sent req/s'), help: 'requests sent per second inside the window', cell: tput((s) => s.sendRate, 'sendRate') },
  { name: 'latency', header: fixed('Latency (s)'), help: 'mean request latency (end to end), s', cell: lat((s) => (s.metrics.e2eMs ? s.metrics.e2eMs.mean / 1000 : undefined), 'e2eMean', 1 / 1000) },
  { name: 'ttft', header: fixed('TTFT (ms)'), help: 'mean time to first token, ms', cell: lat((s) => s.metrics.ttftMs?.mean, 'ttftMean') },
  { name: 'itl', header: fixed('ITL (ms)'), help: 'mean inter-token latency (TPOT), ms', cell: lat((s) => s.metrics.itlMs?.mean, 'itlMean') },
  { name: 'inputs', header: fixed('Inputs/s'), help: 'embeddings: texts embedded per second', cell: tput((s) => s.inputThroughput, 'inputThroughput') },
  { name: 'input-tokens', header: fixed('Input tok/s'), help: 'prompt (input) token throughput, tokens/s', cell: tput((s) => s.promptTokenThroughput, 'promptTokenThroughput') },
  { name: 'e2e', header: fixed('E2E (ms)'), help: 'mean request latency (end to end), ms', cell: lat((s) => s.metrics.e2eMs?.mean, 'e2eMean') },
  { name: 'tokens', header: fixed('Output tok/s'), help: 'output token throughput, tokens/s', cell: tput((s) => s.outputTokenThroughput, 'outputTokenThroughput') },
  { name: 'total-tokens', header: fixed('Total tok/s'), help: 'prompt + output token throughput, tokens/s', cell: tput((s) => s.totalTokenThroughput, 'totalTokenThroughput') },
  { name: 'per-token', header: fixed('ms/token'), help: 'mean latency per token (prompt + output), ms', cell: lat((s) => s.metrics.latencyPerTokenMs?.mean) },
  {
    name: 'per-output-token',
    header: fixed('ms/output token'),
    help: 'mean latency per output token, ms',
    cell: lat((s) => s.metrics.latencyPerOutputTokenMs?.mean),
  },
  ...percentileColumns(),
  { name: 'concurrency', header: fixed('In flight'), help: 'time-weighted mean of requests in flight', cell: tput((s) => s.meanConcurrency) },
  { name: 'goodput', header: fixed('Goodput req/s'), help: 'requests meeting every --slo limit, per second', cell: tput((s) => s.goodput?.requestsPerS, 'goodput') },
  {
    name: 'ok',
    header: (ctx) => (ctx.layout === 'grid' ? 'ok/sent (burst · latency)' : 'ok/sent'),
    help: 'measured requests that succeeded / were sent (grid: its burst · its latency pass)',
    cell: (r, ctx) => r.stages.map(ctx.layout === 'grid' ? cellSamples : samples).join(' · '),
  },
  {
    name: 'failed',
    header: fixed('Failed'),
    help: 'failed requests, their share and error codes; requests cut by the stop',
    cell: (r) => {
      const cells = r.stages.map(failureCell);
      return cells.every((c) => c === '0') ? '0' : cells.join(' · ');
    },
  },
  {
    name: 'slo',
    header: (ctx) => sloHeader(ctx.capacity),
    help: 'with --slo: share of requests meeting every limit (capacity: pass/FAIL per probe)',
    cell: (r, ctx) => (r.throughput ? sloCell(r.throughput, ctx.capacity) : '—'),
  },
  { name: 'ttfo', header: fixed('TTFO (ms)'), help: 'reasoning models: mean time to the first token of the answer, ms', cell: lat((s) => s.metrics.ttfoMs?.mean) },
  { name: 'reasoning', header: fixed('Reasoning tokens'), help: 'reasoning models: mean output tokens spent reasoning per request', cell: lat((s) => s.metrics.reasoningTokens?.mean) },
  { name: 'image-tokens', header: fixed('Image tokens'), help: "--images: mean prompt tokens the images took per request (server's prompt count − the client's text count)", cell: lat((s) => s.metrics.imageTokens?.mean) },
  {
    name: 'cache',
    header: fixed('Cache hit %'),
    help: "share of prompt tokens served from the server's prefix cache (its usage, else its /metrics)",
    cell: (r) => (r.throughput?.prefixCacheHitRate !== undefined ? (100 * r.throughput.prefixCacheHitRate).toFixed(1) : '—'),
  },
  {
    name: 'j-token',
    header: fixed('J/token'),
    help: "--power: GPU energy per output token over the row's window, J (invalid: the readings did not cover it)",
    cell: (r) => jPerTokenCell(r.throughput?.energy),
  },
  { name: 'avg-w', header: fixed('Avg W'), help: "--power: mean power of the deployment's GPUs over the row's window, W (— where the readings did not cover it)", cell: (r) => avgWattsCell(r.throughput?.energy) },
  {
    name: 'server',
    header: fixed(SERVER_GAUGES_HEADER),
    help: "the server's /metrics over the row's window (several --target URLs: added up): running / waiting requests at its busiest reading (most running + waiting), peak KV-cache use",
    cell: (r) => serverCell(r.throughput),
  },
];

/** Names standing for several columns. */
const GROUPS: Record<string, readonly string[]> = Object.fromEntries(
  PERCENTILES.map(([p]) => [p, [`ttft-${p}`, `itl-${p}`]] as const),
);

const DEFAULTS: Record<'sweep' | 'grid', readonly string[]> = {
  sweep: ['rps', 'latency', 'ttft', 'itl', 'tokens', 'ttft-p99', 'itl-p99', 'ok', 'failed'],
  grid: ['rps', 'tokens', 'per-token', 'per-output-token', 'ttft', 'itl', 'ok', 'failed'],
};
/** Embeddings replies have no first token and no output: throughput in texts and input tokens, latency end to end. */
const EMBEDDINGS_DEFAULT = ['rps', 'inputs', 'input-tokens', 'e2e', 'e2e-p50', 'e2e-p99', 'ok', 'failed'] as const;


/** The default columns of a layout: the compact set, plus SLO and server columns when the run has them. */
export function defaultColumns(layout: 'sweep' | 'grid', stages: readonly StageSummary[]): string[] {
  const out: string[] = isEmbeddingsRun(stages) ? [...EMBEDDINGS_DEFAULT] : [...DEFAULTS[layout]];
  if (stages.some((s) => s.metrics.reasoningTokens)) out.splice(out.indexOf('ttft') + 1, 0, 'ttfo', 'reasoning');
  if (stages.some((s) => s.metrics.imageTokens)) out.splice(out.includes('tokens') ? out.indexOf('tokens') + 1 : out.length, 0, 'image-tokens');
  if (stages.some((s) => s.sloAttainment)) out.push('slo');
  // A server that reports its cache but served nothing from it (unique prompts) adds a column of zeros, and one that
  // served only a shared first token (chance) a column of 0.2s: shown on demand only.
  if (stages.some(cacheBeyondChance)) out.push('cache');
  // Measured energy (--power) only: a prediction's figures are in the note under the table (row-notes.ts).
  if (stages.some((s) => s.energy && s.energy.source !== 'simulator')) out.push('j-token', 'avg-w');
  if (stages.some((s) => s.server)) out.push('server');
  return out;
}

export const COLUMN_HELP = `default, all, p50, p90, p95, p99 (TTFT and ITL at that percentile), ${TERMINAL_COLUMNS.map((c) => c.name).join(', ')}`;

/**
 * `--columns LIST`: comma-separated names (case-insensitive); `default` stands for the layout's default set and `pNN`
 * for the TTFT and ITL columns at that percentile. Unknown names are one E_CONFIG error naming the choices.
 * Returns the list as given (expanded per layout by `resolveColumns`).
 */
export function parseColumns(raw: string, flag = '--columns'): string[] {
  const names = raw.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  const known = new Set([...TERMINAL_COLUMNS.map((c) => c.name), ...Object.keys(GROUPS), 'default', 'all']);
  const bad = names.filter((n) => !known.has(n));
  if (names.length === 0 || bad.length > 0) {
    throw configError(`${flag} ${JSON.stringify(raw)}: ${bad.length ? `unknown column ${bad.map((b) => `"${b}"`).join(', ')}` : 'no column named'}`, `choose from ${COLUMN_HELP}`);
  }
  return names;
}

/** The columns to print for a run, in the order asked, each once. */
export function resolveColumns(asked: readonly string[] | undefined, layout: 'sweep' | 'grid', stages: readonly StageSummary[]): TerminalColumn[] {
  const names = (asked ?? ['default']).flatMap((n) =>
    n === 'default' ? defaultColumns(layout, stages) : n === 'all' ? TERMINAL_COLUMNS.map((c) => c.name) : (GROUPS[n] ?? [n]),
  );
  const byName = new Map(TERMINAL_COLUMNS.map((c) => [c.name, c] as const));
  return [...new Set(names)].map((n) => byName.get(n)).filter((c): c is TerminalColumn => c !== undefined);
}
