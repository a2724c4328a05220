import type { StageResult } from '../load/types.js';
import type { RequestRecord } from './record.js';
import { computeStats, type Stats } from './stats.js';

/** Service-level objectives: a request is "good" when it meets every one given (ms). */
export interface Slo {
  ttftMs?: number;
  itlMs?: number;
  e2eMs?: number;
}

export type MetricName =
  | 'ttftMs'
  | 'itlMs'
  | 'e2eMs'
  | 'queuedE2eMs'
  | 'latencyPerTokenMs'
  | 'latencyPerOutputTokenMs'
  | 'chunkGapMs'
  | 'dispatchLagMs'
  | 'timerLagMs'
  | 'clientQueueMs'
  | 'promptTokens'
  | 'outputTokens';

/** One table row: a stage's figures over its measured window (warm-up excluded). */
export interface StageSummary {
  index: number;
  label: string;
  kind: 'closed' | 'open' | 'burst';
  concurrency?: number;
  targetRate?: number;
  /** first send → last completion of measured requests, seconds. */
  durationS: number;
  requests: { total: number; ok: number; errors: number; incomplete: number; warmup: number };
  /** Failed requests by error code; HTTP errors as `E_HTTP_STATUS:<status>`. */
  errorsByCode: Record<string, number>;
  /** errors / (ok + errors): requests cut by the run's end or a stop are counted apart, as incomplete. */
  failureShare: number;
  /** First error message seen, to print in place of figures when nothing succeeded. */
  firstError?: string;
  requestThroughput: number;
  outputTokenThroughput: number;
  promptTokenThroughput: number;
  totalTokenThroughput: number;
  /** Measured requests sent per second over the window (open loop: compare with targetRate). */
  sendRate: number;
  /**
   * Steady-state completion rate: (n − 1) / (last completion − first completion). Unlike
   * requestThroughput it is not lowered by the tail of a short row, so it decides belowTarget.
   */
  completionRate?: number;
  /** Open loop only: completionRate fell below 90% of the target rate (the server could not keep up). */
  belowTarget: boolean;
  /** Time-weighted mean of requests in flight. */
  meanConcurrency: number;
  metrics: Partial<Record<MetricName, Stats>>;
  /** Requests whose output length differed from the requested length. */
  outputLengthMismatches: number;
  /** Requests whose server-reported prompt length differed from the client's count. */
  promptLengthMismatches: number;
  tokenCountSources: Record<string, number>;
  goodput?: { slo: Slo; requestsPerS: number; good: number };
  interrupted: boolean;
}

export function summarizeStage(result: StageResult, slo?: Slo): StageSummary {
  const { spec } = result;
  const measured = result.records.filter((r) => !r.warmup);
  const ok = measured.filter((r) => r.status === 'ok');
  const errors = measured.filter((r) => r.status === 'error');
  const incomplete = measured.filter((r) => r.status === 'incomplete');

  let start = Infinity;
  let end = -Infinity;
  for (const r of measured) {
    if (r.sentAtMs < start) start = r.sentAtMs;
    if (r.endAtMs > end) end = r.endAtMs;
  }
  const durationS = measured.length > 0 ? Math.max(1e-9, (end - start) / 1000) : 0;
  const rate = (n: number): number => (durationS > 0 ? n / durationS : 0);

  const errorsByCode: Record<string, number> = {};
  for (const r of errors) {
    // HTTP failures are told apart by status: a 429 (back off) and a 500 (broken) mean different things.
    const status = r.error?.httpStatus;
    const code = `${r.error?.code ?? 'E_INTERNAL'}${status !== undefined ? `:${status}` : ''}`;
    errorsByCode[code] = (errorsByCode[code] ?? 0) + 1;
  }
  const tokenCountSources: Record<string, number> = {};
  let outputSum = 0;
  let promptSum = 0;
  for (const r of ok) {
    outputSum += r.outputTokens;
    promptSum += r.promptTokens;
    tokenCountSources[r.tokenCountSource] = (tokenCountSources[r.tokenCountSource] ?? 0) + 1;
  }

  const pick = (f: (r: RequestRecord) => number | undefined): number[] => {
    const out: number[] = [];
    for (const r of ok) {
      const v = f(r);
      if (v !== undefined && Number.isFinite(v)) out.push(v);
    }
    return out;
  };
  const gaps: number[] = [];
  for (const r of ok) for (const g of r.chunkGapsMs) gaps.push(g);
  const metrics: StageSummary['metrics'] = {};
  const put = (name: MetricName, values: number[]): void => {
    const s = computeStats(values);
    if (s) metrics[name] = s;
  };
  put('ttftMs', pick((r) => r.ttftMs));
  put('itlMs', pick((r) => r.itlMs));
  put('e2eMs', pick((r) => r.e2eMs));
  put('queuedE2eMs', pick((r) => r.queuedE2eMs));
  put('latencyPerTokenMs', pick((r) => r.latencyPerTokenMs));
  put('latencyPerOutputTokenMs', pick((r) => r.latencyPerOutputTokenMs));
  put('chunkGapMs', gaps);
  put('dispatchLagMs', measured.map((r) => r.dispatchLagMs));
  put('timerLagMs', measured.map((r) => r.dispatchLagMs - (r.clientQueueMs ?? 0)));
  put('clientQueueMs', measured.map((r) => r.clientQueueMs ?? 0));
  put('promptTokens', pick((r) => r.promptTokens));
  put('outputTokens', pick((r) => r.outputTokens));

  const summary: StageSummary = {
    index: result.index,
    label: spec.label,
    kind: spec.kind,
    durationS,
    requests: {
      total: measured.length,
      ok: ok.length,
      errors: errors.length,
      incomplete: incomplete.length,
      warmup: result.records.length - measured.length,
    },
    errorsByCode,
    failureShare: ok.length + errors.length > 0 ? errors.length / (ok.length + errors.length) : 0,
    requestThroughput: rate(ok.length),
    outputTokenThroughput: rate(outputSum),
    promptTokenThroughput: rate(promptSum),
    totalTokenThroughput: rate(outputSum + promptSum),
    sendRate: rate(measured.length),
    completionRate: completionRate(ok),
    belowTarget: false,
    meanConcurrency: meanConcurrency(measured, start, end),
    metrics,
    outputLengthMismatches: ok.filter((r) => r.outputTokens !== r.requestedOutputTokens).length,
    promptLengthMismatches: ok.filter((r) => r.promptTokens !== r.clientPromptTokens).length,
    tokenCountSources,
    interrupted: result.interrupted,
  };
  const firstError = [...errors, ...incomplete][0]?.error;
  if (firstError) summary.firstError = `${firstError.code}: ${firstError.message}`;
  if (spec.kind === 'closed') summary.concurrency = spec.concurrency;
  if (spec.kind === 'open') {
    summary.targetRate = spec.rate;
    summary.belowTarget = ok.length >= 3 && (summary.completionRate ?? 0) < 0.9 * spec.rate;
  }
  if (slo && (slo.ttftMs !== undefined || slo.itlMs !== undefined || slo.e2eMs !== undefined)) {
    const good = ok.filter(
      (r) =>
        (slo.ttftMs === undefined || (r.ttftMs ?? Infinity) <= slo.ttftMs) &&
        (slo.itlMs === undefined || (r.itlMs ?? 0) <= slo.itlMs) &&
        (slo.e2eMs === undefined || (r.e2eMs ?? Infinity) <= slo.e2eMs),
    ).length;
    summary.goodput = { slo, good, requestsPerS: rate(good) };
  }
  return summary;
}

function completionRate(ok: RequestRecord[]): number {
  if (ok.length < 2) return 0;
  let first = Infinity;
  let last = -Infinity;
  for (const r of ok) {
    if (r.endAtMs < first) first = r.endAtMs;
    if (r.endAtMs > last) last = r.endAtMs;
  }
  return last > first ? ((ok.length - 1) * 1000) / (last - first) : 0;
}

/** Time-weighted mean in-flight count over [start, end] by a sweep over send/end events. */
function meanConcurrency(records: RequestRecord[], start: number, end: number): number {
  if (!(end > start)) return 0;
  let area = 0;
  for (const r of records) area += Math.max(0, Math.min(r.endAtMs, end) - Math.max(r.sentAtMs, start));
  return area / (end - start);
}
