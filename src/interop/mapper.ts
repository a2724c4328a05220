import { computeStats, type Stats } from '../metrics/stats.js';
import type { MetricName, StageSummary } from '../results/index.js';

/**
 * The shared half of every importer: a tool's figures become inferbench's stage summary here, by the rules of
 * docs/import.md. A figure whose definition matches inferbench's (anchors.md §(b)) is carried as the tool
 * computed it; a figure the file lacks but can be derived exactly (a rate from a total and a duration, a
 * per-request quantity from per-request values) is derived; anything else is left out and said in the notes.
 */

/** A stats block from the figures a file gives; a figure it lacks is NaN (— in tables, null in summary.json). */
export function partialStats(p: Partial<Stats> & { count: number }): Stats {
  const n = (v: number | undefined): number => (v === undefined || !Number.isFinite(v) ? Number.NaN : v);
  return { count: p.count, mean: n(p.mean), median: n(p.median), p90: n(p.p90), p95: n(p.p95), p99: n(p.p99), min: n(p.min), max: n(p.max), stddev: n(p.stddev) };
}

/**
 * The file's aggregate where it has a figure; the figures it lacks computed from its own per-request values
 * (linear percentiles, population stddev: computeStats). With no aggregate, all from the values.
 */
export function withRequestValues(carried: Stats | undefined, values: readonly number[]): Stats | undefined {
  const own = values.length > 0 ? computeStats(values) : undefined;
  if (!carried) return own;
  if (!own) return carried;
  const out = { ...carried };
  for (const k of ['mean', 'median', 'p90', 'p95', 'p99', 'min', 'max', 'stddev'] as const) if (!Number.isFinite(out[k])) out[k] = own[k];
  return out;
}

/** Unit conversion of a whole stats block (count unchanged). */
export function scaleStats(s: Stats, k: number): Stats {
  return { ...s, mean: s.mean * k, median: s.median * k, p90: s.p90 * k, p95: s.p95 * k, p99: s.p99 * k, min: s.min * k, max: s.max * k, stddev: s.stddev * k };
}

/** Milliseconds per unit for the time units tools write; undefined for a unit that is not a time. */
export function msPer(unit: string | undefined): number | undefined {
  switch ((unit ?? '').trim().toLowerCase()) {
    case 'ms':
    case 'msec':
    case 'milliseconds':
      return 1;
    case 's':
    case 'sec':
    case 'secs':
    case 'seconds':
      return 1000;
    case 'us':
    case 'µs':
    case 'microseconds':
      return 1e-3;
    case 'ns':
    case 'nanoseconds':
      return 1e-6;
    default:
      return undefined;
  }
}

/** The lines an importer writes into summary.json `notes`: how each figure was mapped, and what was left out. */
export class ImportNotes {
  readonly lines: string[] = [];
  /** A figure carried or derived: `ttftMs: GuideLLM time_to_first_token_ms, the same definition`. */
  mapped(field: string, how: string): void {
    this.lines.push(`${field}: ${how}`);
  }
  /** A figure not carried: `left out: chunk gap — GuideLLM records no gaps between chunks`. Never relabelled. */
  leftOut(what: string, why: string): void {
    this.lines.push(`left out: ${what} — ${why}`);
  }
  info(text: string): void {
    this.lines.push(text);
  }
}

/** What an importer knows about one row (one benchmark, one run line, one concurrency level). */
export interface StageFigures {
  index: number;
  label: string;
  kind: 'closed' | 'open' | 'burst';
  concurrency?: number;
  targetRate?: number;
  /** The tool's benchmark duration, seconds (the window every rate of the row divides by). */
  durationS: number;
  ok: number;
  errors: number;
  incomplete?: number;
  errorsByCode?: Record<string, number>;
  firstError?: string;
  /** Carried from the file when it has them; else derived from the totals over durationS. */
  requestThroughput?: number;
  outputTokenThroughput?: number;
  promptTokenThroughput?: number;
  totalTokenThroughput?: number;
  totalOutputTokens?: number;
  totalPromptTokens?: number;
  /** Time-weighted mean of requests in flight, when the tool measured it. */
  meanConcurrency?: number;
  metrics: Partial<Record<MetricName, Stats>>;
  tokenCountSources?: Record<string, number>;
}

/** An open-loop row whose completions fell this far under its target over the whole benchmark did not keep up. */
const KEPT_UP_SHARE = 0.8;

/** A stage summary in the store's schema from an imported row. Rates the file lacks are derived, never guessed. */
export function buildStage(f: StageFigures): StageSummary {
  const incomplete = f.incomplete ?? 0;
  const total = f.ok + f.errors + incomplete;
  const rate = (n: number | undefined): number => (n !== undefined && f.durationS > 0 ? n / f.durationS : Number.NaN);
  const output = f.outputTokenThroughput ?? rate(f.totalOutputTokens);
  const prompt = f.promptTokenThroughput ?? rate(f.totalPromptTokens);
  const stage: StageSummary = {
    index: f.index,
    label: f.label,
    kind: f.kind,
    durationS: f.durationS,
    requests: { total, ok: f.ok, errors: f.errors, incomplete, warmup: 0 },
    errorsByCode: f.errorsByCode ?? {},
    failureShare: f.ok + f.errors > 0 ? f.errors / (f.ok + f.errors) : 0,
    requestThroughput: f.requestThroughput ?? rate(f.ok),
    outputTokenThroughput: output,
    promptTokenThroughput: prompt,
    totalTokenThroughput: f.totalTokenThroughput ?? (Number.isFinite(output) && Number.isFinite(prompt) ? output + prompt : Number.NaN),
    sendRate: rate(total),
    completionRate: rate(f.ok + f.errors),
    belowTarget: false,
    meanConcurrency: f.meanConcurrency ?? Number.NaN,
    metrics: f.metrics,
    outputLengthMismatches: 0,
    promptLengthMismatches: 0,
    tokenCountSources: f.tokenCountSources ?? {},
    interrupted: false,
    window: { rule: 'batch', startS: 0, lengthS: f.durationS },
  };
  if (f.firstError !== undefined) stage.firstError = f.firstError;
  if (f.concurrency !== undefined) stage.concurrency = f.concurrency;
  if (f.targetRate !== undefined && Number.isFinite(f.targetRate)) {
    stage.targetRate = f.targetRate;
    // The file has no steady window to judge keeping up by; a row far under its target over the whole benchmark did not.
    if (f.kind === 'open' && stage.requestThroughput < KEPT_UP_SHARE * f.targetRate) {
      stage.belowTarget = true;
      stage.overload = `completed ${stage.requestThroughput.toFixed(2)} req/s of the ${f.targetRate.toFixed(2)} req/s target over the tool's whole benchmark`;
    }
  }
  return stage;
}

/** `E_HTTP_STATUS:<status>` when a tool's error text names an HTTP status, else `E_IMPORTED` (the text is kept). */
export function errorCodeOf(message: string): { code: string; httpStatus?: number } {
  // "HTTP 429", "status code 500", "status=503" or a reason phrase after the number ("429 Too Many Requests").
  const m = /(?:HTTP|status(?:[ _]code)?)\W{0,3}([45]\d\d)\b/i.exec(message) ?? /\b([45]\d\d) (?:[A-Z][a-z]+)/.exec(message);
  const status = m ? Number(m[1]) : undefined;
  return status !== undefined ? { code: `E_HTTP_STATUS:${status}`, httpStatus: status } : { code: 'E_IMPORTED' };
}

/** Failure counts by code, and the first failure as `CODE: message`, from the failed records of a row. */
export function tallyErrors(failed: readonly { error?: { code: string; message: string } }[]): { errorsByCode: Record<string, number>; firstError?: string } {
  const errorsByCode: Record<string, number> = {};
  for (const r of failed) {
    const code = r.error?.code ?? 'E_IMPORTED';
    errorsByCode[code] = (errorsByCode[code] ?? 0) + 1;
  }
  const first = failed[0]?.error;
  return { errorsByCode, ...(first ? { firstError: `${first.code}: ${first.message}` } : {}) };
}

/** Row label and kind in inferbench's words, from a closed loop of N, an open loop at R req/s, or everything at once. */
export function rowShape(load: { concurrency?: number; rate?: number }): Pick<StageFigures, 'label' | 'kind' | 'concurrency' | 'targetRate'> {
  const { concurrency, rate } = load;
  if (rate !== undefined && Number.isFinite(rate) && rate > 0) {
    return { label: `asynchronous@${rate.toFixed(2)} req/sec`, kind: 'open', targetRate: rate, ...(concurrency !== undefined ? { concurrency } : {}) };
  }
  if (concurrency === 1) return { label: 'synchronous', kind: 'closed', concurrency: 1 };
  if (concurrency !== undefined) return { label: `concurrent@${concurrency}`, kind: 'closed', concurrency };
  return { label: 'throughput', kind: 'burst' };
}
