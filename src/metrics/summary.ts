import type { StageResult } from '../load/types.js';
import { StageAccumulator } from './accumulator.js';
import type { ServerTelemetry } from './prometheus.js';
import type { Stats } from './stats.js';

/** Service-level objectives: a request is "good" when it meets every one given (ms). */
export interface Slo {
  ttftMs?: number;
  itlMs?: number;
  e2eMs?: number;
}

const METRIC_NAMES = [
  'ttftMs',
  'itlMs',
  'e2eMs',
  'queuedE2eMs',
  'latencyPerTokenMs',
  'latencyPerOutputTokenMs',
  'chunkGapMs',
  'dispatchLagMs',
  'timerLagMs',
  'clientQueueMs',
  'promptTokens',
  'outputTokens',
  'promptTokenMismatch',
  'ttftFirstTurnMs',
  'ttftLaterTurnMs',
  'cachedTokens',
] as const;

/** promptTokenMismatch: server-reported minus client-built prompt tokens (whole prompts with a server count). */
export type MetricName = (typeof METRIC_NAMES)[number];

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
  /** The server's own gauges over the row, from its Prometheus /metrics (when it has one). */
  server?: ServerTelemetry;
  interrupted: boolean;
}

export function summarizeStage(result: StageResult, slo?: Slo): StageSummary {
  const { spec } = result;
  let acc = result.accumulator;
  if (!acc) {
    acc = new StageAccumulator(slo);
    for (const r of result.records) acc.add(r);
  }
  const durationS = acc.measured > 0 ? Math.max(1e-9, (acc.lastEndMs - acc.firstSentMs) / 1000) : 0;
  const rate = (n: number): number => (durationS > 0 ? n / durationS : 0);
  const metrics: StageSummary['metrics'] = {};
  for (const name of METRIC_NAMES) {
    const st = acc.stats(name);
    if (st) metrics[name] = st;
  }
  const completionRate =
    acc.ok >= 2 && acc.lastOkEndMs > acc.firstOkEndMs ? ((acc.ok - 1) * 1000) / (acc.lastOkEndMs - acc.firstOkEndMs) : 0;

  const summary: StageSummary = {
    index: result.index,
    label: spec.label,
    kind: spec.kind,
    durationS,
    requests: { total: acc.measured, ok: acc.ok, errors: acc.errors, incomplete: acc.incomplete, warmup: acc.warmup },
    errorsByCode: acc.errorsByCode,
    failureShare: acc.ok + acc.errors > 0 ? acc.errors / (acc.ok + acc.errors) : 0,
    requestThroughput: rate(acc.ok),
    outputTokenThroughput: rate(acc.outputTokens),
    promptTokenThroughput: rate(acc.promptTokens),
    totalTokenThroughput: rate(acc.outputTokens + acc.promptTokens),
    sendRate: rate(acc.measured),
    completionRate,
    belowTarget: false,
    meanConcurrency: durationS > 0 ? acc.busyMs / (durationS * 1000) : 0,
    metrics,
    outputLengthMismatches: acc.outputLengthMismatches,
    promptLengthMismatches: acc.promptLengthMismatches,
    tokenCountSources: acc.tokenCountSources,
    interrupted: result.interrupted,
  };
  const firstError = acc.firstError ?? acc.firstIncomplete;
  if (firstError) summary.firstError = firstError;
  if (spec.kind === 'closed') summary.concurrency = spec.concurrency;
  if (spec.kind === 'open') {
    summary.targetRate = spec.rate;
    // A replayed trace has no rate to keep up with, only its own timestamps.
    summary.belowTarget = spec.arrival !== 'trace' && acc.ok >= 3 && completionRate < 0.9 * spec.rate;
  }
  if (slo && (slo.ttftMs !== undefined || slo.itlMs !== undefined || slo.e2eMs !== undefined)) {
    summary.goodput = { slo, good: acc.good, requestsPerS: rate(acc.good) };
  }
  return summary;
}
