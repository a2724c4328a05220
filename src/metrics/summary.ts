import { METRIC_NAMES } from '../results/metric-names.js';
import type { ServerTelemetry, StageSummary } from '../results/stage.js';
import type { Slo } from '../results/stats.js';
import { capMismatch, capQueue } from './cap-check.js';
import { CHANCE_SHARED_TOKENS } from './cache-chance.js';
import { driftWarning } from './drift.js';
import { StageAccumulator } from './accumulator.js';
import { computeStats, type Stats } from './stats.js';
import { replicaWarnings } from './replica-figures.js';
import { windowFigures } from './window-figures.js';
import { steadyStateFigures } from './steady-state.js';
import type { StageInput, StageInputWindowRules } from './stage-input.js';

export type { StageInput, StageInputSpec } from './stage-input.js';

// The row's shape, the SLO and the metric names are the results schema's (src/results/); re-exported here for the
// files that import them from metrics/.
export { METRIC_NAMES, type MetricName } from '../results/metric-names.js';
export type { Slo } from '../results/stats.js';
export type { StageSummary } from '../results/stage.js';

/**
 * A row that can stand on a latency-vs-throughput curve: it has successes completed inside its window, and it
 * kept up with its load. An overloaded row achieves less than it was offered while its latencies grow with a
 * backlog: placed by its achieved rate, it would fall inside the curve and bend every reading taken from it.
 */
export function onCurve(s: StageSummary): boolean {
  return s.requests.ok > 0 && s.requestThroughput > 0 && !s.belowTarget;
}

/** Percentiles from fewer samples than this are marked in tables. */
export const MIN_PERCENTILE_SAMPLES = 20;

export function summarizeStage(result: StageInput, slo?: Slo, options: { steadyState?: boolean } = {}): StageSummary {
  const { spec } = result;
  let acc = result.accumulator;
  if (!acc) {
    acc = new StageAccumulator(slo);
    for (const r of result.records) acc.add(r);
  }
  const metrics: StageSummary['metrics'] = {};
  for (const name of METRIC_NAMES) {
    const st = acc.stats(name);
    if (st) metrics[name] = st;
  }
  const w = result.window;
  const steady = w !== undefined && w.openAtMs !== null && w.closeAtMs !== null;
  const from = steady ? (w.openAtMs as number) : acc.firstSentMs;
  const to = steady ? (w.closeAtMs as number) : acc.lastEndMs;
  const fig = acc.measured > 0 || steady ? windowFigures(acc, from, to) : undefined;
  // Batch rows keep their whole-row figures: every measured request, first send → last completion.
  const durationS = fig ? fig.lengthS : 0;
  const rate = (n: number): number => (durationS > 0 ? n / durationS : 0);
  // req/s as robust as output tok/s: each success counted over its stream (window-figures.ts).
  const okDone = steady ? (fig?.okRequestsDone ?? 0) : acc.ok;
  const outTokens = steady ? (fig?.outputTokens ?? 0) : acc.outputTokens;
  const promptTokens = steady ? (fig?.promptTokens ?? 0) : acc.promptTokens;

  const summary: StageSummary = {
    index: result.index,
    label: spec.label,
    kind: spec.kind,
    durationS,
    startedAtMs: result.startedAtMs,
    endedAtMs: result.endedAtMs,
    requests: {
      total: acc.measured, ok: acc.ok, errors: acc.errors, incomplete: acc.incomplete, warmup: acc.warmup,
      ...(acc.retried > 0 ? { retried: acc.retried } : {}),
      ...(acc.cooldown > 0 || acc.cooldownCut > 0 ? { cooldown: acc.cooldown, cooldownCut: acc.cooldownCut } : {}),
    },
    errorsByCode: acc.errorsByCode,
    failureShare: acc.ok + acc.errors > 0 ? acc.errors / (acc.ok + acc.errors) : 0,
    requestThroughput: rate(okDone),
    outputTokenThroughput: rate(outTokens),
    promptTokenThroughput: rate(promptTokens),
    totalTokenThroughput: rate(outTokens + promptTokens),
    sendRate: rate(steady ? (fig?.sends ?? 0) : acc.measured),
    completionRate: rate(steady ? (fig?.completions ?? 0) : acc.ok + acc.errors),
    belowTarget: false,
    meanConcurrency: fig?.meanConcurrency ?? 0,
    metrics,
    outputLengthMismatches: acc.outputLengthMismatches,
    promptLengthMismatches: acc.promptLengthMismatches,
    tokenCountSources: acc.tokenCountSources,
    interrupted: result.interrupted,
  };
  if (spec.grid) summary.grid = spec.grid;
  if (acc.inputRequests > 0) {
    summary.inputsPerRequest = acc.ok > 0 ? acc.okInputs / acc.ok : acc.inputs / acc.inputRequests;
    summary.inputThroughput = summary.requestThroughput * summary.inputsPerRequest;
  }
  if (fig) {
    summary.window = {
      rule: steady ? 'steady' : 'batch',
      startS: (from - result.startedAtMs) / 1000,
      lengthS: fig.lengthS,
      fromMs: from,
      toMs: to,
      ...(steady ? { inFlightAtOpen: fig.inFlightAtOpen, inFlightAtClose: fig.inFlightAtClose } : {}),
      ...(w?.unsettled ? { unsettled: true } : {}),
      ...(w?.capSearch ? { capSearch: w.capSearch } : {}),
    };
  }
  if (w?.stoppedEarly) summary.stoppedEarly = w.stoppedEarly;
  const few = steady && fig ? fewRequests(summary, spec.window) : undefined;
  if (few) summary.fewRequests = few;
  if (result.stalled) {
    summary.stoppedEarly ??= result.stalled.reason;
    if (result.stalled.completed === 0) summary.serverSilent = true;
  }
  const firstError = acc.firstError ?? acc.firstIncomplete;
  if (firstError) summary.firstError = firstError;
  if (spec.kind === 'closed') summary.concurrency = spec.concurrency;
  if (spec.kind === 'open') {
    summary.targetRate = spec.rate;
    // A replayed trace has no rate to keep up with, only its own timestamps.
    const overload =
      spec.arrival !== 'trace' && fig && steady
        ? w?.unsettled
          ? `requests sent after the first completion had not completed ${(summary.window?.startS ?? 0).toFixed(1)} s into the row: latency kept growing (a queue)`
          : // A shard keeps every N-th arrival: its rate is 1/N of the row's, its counts N times less dispersed.
            overloadReason(summary, spec.rate * (result.loadShare ?? 1), fig, arrivalDispersion(spec.arrival, spec.burstiness) * (result.loadShare ?? 1))
        : undefined;
    if (overload) {
      summary.overload = overload;
      summary.belowTarget = true;
    }
  }
  if (options.steadyState && fig) {
    const steadyFigs = steadyStateFigures(acc, from, to, result.startedAtMs);
    summary.steadyState = steadyFigs ?? null;
  }
  if (acc.sessions.size > 0) {
    const list = [...acc.sessions.values()];
    const [first, later] = acc.cacheByTurn;
    summary.sessions = {
      count: list.length,
      meanTurns: list.reduce((a, s) => a + s.turns, 0) / list.length,
      durationMs: computeStats(Float64Array.from(list, (s) => s.endMs - s.sentMs)) as Stats,
      ...(first.prompt > 0 ? { prefixCacheHitRateFirstTurn: first.cached / first.prompt } : {}),
      ...(later.prompt > 0 ? { prefixCacheHitRateLaterTurns: later.cached / later.prompt } : {}),
    };
  }
  if (acc.cacheReported > 0 && acc.promptTokensWithCacheInfo > 0) {
    summary.prefixCacheHitRate = acc.cachedPromptTokens / acc.promptTokensWithCacheInfo;
    summary.prefixCacheSource = 'usage';
  }
  if (acc.replicas.size > 0) {
    summary.replicas = acc.replicas.figures(durationS, fig ? { fromMs: from, toMs: to } : undefined);
    const lines = replicaWarnings(summary.replicas);
    if (lines.length > 0) summary.replicaWarnings = lines;
  }
  if (acc.specReported > 0 && acc.specVerifySteps > 0) {
    summary.specAcceptLength = { tokensPerVerify: acc.specOutputTokens / acc.specVerifySteps, verifySteps: acc.specVerifySteps, requests: acc.specReported };
  }
  const cached = metrics.cachedTokens;
  const prompt = metrics.promptTokens?.mean ?? 0;
  if (cached && cached.count > 0 && cached.max > CHANCE_SHARED_TOKENS && !spec.workload.sharesPrefixes && prompt > 0 && cached.mean * cached.count > UNINTENDED_CACHE_SHARE * prompt * acc.ok) {
    summary.unintendedCache = { requests: cached.count, meanCachedTokens: cached.mean, shareOfPromptTokens: (cached.mean * cached.count) / (prompt * acc.ok) };
  }
  const warnings = steady && fig ? steadyWarnings(summary, w?.unsettled === true) : [];
  // A row that kept up while the server itself changed speed (an overloaded row's queue grows by design: `*`).
  const drift = steady && fig && !summary.belowTarget ? driftWarning(acc, from, to) : undefined;
  if (drift) warnings.push(drift);
  if (warnings.length > 0) summary.steadyWarnings = warnings;
  if (slo && (slo.ttftMs !== undefined || slo.itlMs !== undefined || slo.e2eMs !== undefined)) {
    // Goodput: the request throughput times the share of measured successes that met every SLO.
    const share = acc.ok > 0 ? acc.good / acc.ok : 0;
    summary.goodput = { slo, good: acc.good, requestsPerS: summary.requestThroughput * share };
    // Failed and cut requests are misses: the share of everything measured, not of the successes.
    const of = acc.measured;
    summary.sloAttainment = { percent: of > 0 ? (100 * acc.good) / of : 0, met: acc.good, of };
  }
  if (w?.overSaturated || w?.stoppedEarly) summary.beforeStop = rowOutcomes(acc);
  if (w?.overSaturated) {
    summary.overSaturated = w.overSaturated;
    if (spec.kind === 'open') {
      summary.belowTarget = true;
      summary.overload = w.overSaturated;
    }
  }
  return summary;
}

/** Every request of the row, ramp-up included, by how it ended (the timeline keeps each one's status). */
function rowOutcomes(acc: StageAccumulator): NonNullable<StageSummary['beforeStop']> {
  const out = { sent: 0, ok: 0, failed: 0, cut: 0 };
  for (const status of acc.timeline.status.view()) {
    out.sent++;
    if (status === 0) out.ok++;
    else if (status === 1) out.failed++;
    else out.cut++;
  }
  return out;
}

/**
 * Keeping up, for an open-loop row: it sent at its target rate, completions kept pace with sends, and the
 * requests in flight did not pile up through the window. The first broken condition is the reason.
 */
function overloadReason(s: StageSummary, target: number, fig: ReturnType<typeof windowFigures>, dispersion: number): string | undefined {
  const f = (n: number): string => n.toFixed(2);
  if (fig.sends < 3) return undefined;
  // Counts in a window are whole numbers: allow one request (and Poisson-size noise in flight) before calling it.
  const completions = s.completionRate ?? 0;
  // Random arrivals make the count in flight at the window's ends random: 2.5 standard deviations of slack.
  const noise = 2.5 * Math.sqrt(dispersion * fig.sends);
  if (completions * fig.lengthS < 0.9 * fig.sends - 1 - noise) {
    return `completed ${f(completions)} req/s of ${f(s.sendRate)} sent; in flight ${fig.inFlightAtOpen} → ${fig.inFlightAtClose}`;
  }
  const growth = fig.inFlightAtClose - fig.inFlightAtOpen;
  // Random arrivals move the count in flight further (more so where service slows as the batch grows): twice the slack.
  if (growth > Math.max(4, 3 * (1 + dispersion) * Math.sqrt(fig.meanConcurrency), 0.1 * fig.sends)) {
    return `requests in flight grew ${fig.inFlightAtOpen} → ${fig.inFlightAtClose} over the ${f(fig.lengthS)}-s window`;
  }
  // Random arrivals put a random count of sends in a window: allow 2.5 standard deviations of it before blaming the client.
  const expected = target * fig.lengthS;
  if (fig.sends < 0.95 * expected - 1 - 2.5 * Math.sqrt(dispersion * expected)) {
    const queued = (s.metrics.clientQueueMs?.p99 ?? 0) > 0 ? ' (requests waited for a --max-concurrency slot)' : ' (the client fell behind its schedule)';
    return `sent ${f(s.sendRate)} of ${f(target)} req/s${queued}`;
  }
  return undefined;
}

/** Above this share of prompt tokens served from cache, prompts that share nothing on purpose flag the row (‡). */
const UNINTENDED_CACHE_SHARE = 0.05;

/**
 * A row whose requests did not report cached tokens takes the prefix-cache hit rate from the server's own /metrics.
 * When the workload shares no prefix on purpose, a hit rate from the server's counters above 5% flags the row as
 * served from cache (‡): most servers report no cached tokens per request unless asked (vLLM
 * --enable-prompt-tokens-details), and an earlier run with the same --seed has sent the same prompts.
 */
export function attachServerTelemetry(s: StageSummary, server: ServerTelemetry | undefined, workload: { sharesPrefixes?: boolean }): void {
  if (!server) return;
  s.server = server;
  if (s.prefixCacheHitRate === undefined && server.prefixCacheHitRate !== undefined && server.prefixCacheSource) {
    s.prefixCacheHitRate = server.prefixCacheHitRate;
    s.prefixCacheSource = server.prefixCacheSource;
    const prompt = s.metrics.promptTokens?.mean ?? 0;
    if (!workload.sharesPrefixes && !s.unintendedCache && server.prefixCacheSource === 'server-counters' && server.prefixCacheHitRate > UNINTENDED_CACHE_SHARE && prompt > 0) {
      s.unintendedCache = { requests: s.requests.ok, meanCachedTokens: server.prefixCacheHitRate * prompt, shareOfPromptTokens: server.prefixCacheHitRate, source: 'server-metrics' };
    }
  }
}

/**
 * Variance over mean of the number of arrivals in a window: 0 for constant arrivals (the count is fixed), 1 for
 * Poisson, 1/shape for gamma gaps (burstiness k: the count's variance is about λT/k).
 */
export function arrivalDispersion(arrival: string | undefined, burstiness?: number): number {
  if (arrival === 'poisson') return 1;
  if (arrival === 'gamma') return 1 / (burstiness ?? 1);
  return 0;
}

/**
 * A time-limited window (not --max-requests, whose count the user chose) that closed with fewer than minSamples
 * requests sent in it: the row could not gather enough to describe its load. The window stays open up to
 * extendFactor × --max-seconds for them, so at the rate the row sent, --max-seconds of
 * minSamples / (rate × extendFactor) would do; a quarter more for noise. A sweep row's window could stay open up to
 * sampleWindowMaxMs (`sizedLimitS`): at its rate the requests took longer than that.
 */
function fewRequests(s: StageSummary, rules: StageInputWindowRules | undefined): StageSummary['fewRequests'] {
  if (!rules || rules.measureMs === undefined || rules.measureRequests !== undefined || s.interrupted || s.stoppedEarly) return undefined;
  const held = s.requests.total;
  if (held >= rules.minSamples) return undefined;
  const rate = s.sendRate > 0 ? s.sendRate : s.completionRate ?? 0;
  const suggestedMaxSeconds = rate > 0 ? Math.ceil((1.25 * rules.minSamples) / (rate * rules.extendFactor)) : 0;
  const sizedLimitS = rules.sampleWindowMaxMs !== undefined ? rules.sampleWindowMaxMs / 1000 : undefined;
  const outgrew = sizedLimitS !== undefined && rate > 0 && rules.minSamples / rate > sizedLimitS;
  return { held, min: rules.minSamples, suggestedMaxSeconds, extendFactor: rules.extendFactor, ...(outgrew ? { sizedLimitS } : {}) };
}

/**
 * How much longer than its window a row's median request may take before the window counts as shorter than one
 * request's lifetime. The window rule keeps a window open until it is as long as the mean latency of its requests
 * completed so far, then closes it on the next completion; the early completions are the quicker ones, so at a
 * saturated row the median of all its requests lands a few percent either side of the window (default sweep's
 * throughput row: 11.4 s both, 11.36 vs 11.48 s in virtual time). That is the rule's own granularity, not a load
 * that had not settled.
 */
const LIFETIME_SLACK = 1.1;

/** Reasons a windowed row's figures may not describe the steady state its label promises. */
export function steadyWarnings(s: StageSummary, unsettled: boolean): string[] {
  const out: string[] = [];
  const cap = capMismatch(s.window?.capSearch);
  if (cap) out.push(cap);
  const queue = capQueue(s.window?.capSearch);
  if (queue) out.push(queue);
  if (unsettled) out.push(`the ramp-up had not settled after ${(s.window?.startS ?? 0).toFixed(1)} s (its requests were still getting slower): the window opened anyway`);
  const e2e = s.metrics.e2eMs?.median;
  if (e2e !== undefined && s.durationS > 0 && e2e / 1000 > LIFETIME_SLACK * s.durationS) {
    out.push(`requests took ${(e2e / 1000).toFixed(1)} s (median), longer than the ${s.durationS.toFixed(1)}-s window: the window holds less than one request's lifetime, so the load may not have settled in it; raise --max-seconds to ${Math.ceil((2 * e2e) / 1000)} or more`);
  }
  if (s.requests.ok > 0 && s.requests.ok < MIN_PERCENTILE_SAMPLES) {
    out.push(`${s.requests.ok} successful requests: percentiles rest on fewer than ${MIN_PERCENTILE_SAMPLES} samples`);
  }
  return out;
}
