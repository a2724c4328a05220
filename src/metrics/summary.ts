import type { StageResult } from '../load/types.js';
import type { CapSearch, WindowRules } from '../load/window.js';
import { capMismatch } from './cap-check.js';
import { CHANCE_SHARED_TOKENS } from './cache-chance.js';
import { driftWarning } from './drift.js';
import { StageAccumulator } from './accumulator.js';
import type { ServerTelemetry } from './prometheus.js';
import { computeStats, type Stats } from './stats.js';
import { windowFigures } from './window-figures.js';
import type { RepeatInterval } from './repeats.js';
import { steadyStateFigures, type SteadyStateFigures } from './steady-state.js';

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
  'connectWaitMs',
  'promptTokens',
  'outputTokens',
  'promptTokenMismatch',
  'ttftFirstTurnMs',
  'ttftLaterTurnMs',
  'cachedTokens',
  'tokensPerChunk',
  'ttfoMs',
  'reasoningTokens',
  'answerItlMs',
  'imageTokens',
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
  /**
   * Length of the window the rates divide by, seconds: the steady window (window.ts) for windowed rows, first send →
   * last completion of measured requests for batch rows.
   */
  durationS: number;
  /** When the row started and ended on the run's clock (the records' ms). */
  startedAtMs?: number;
  endedAtMs?: number;
  /** Grid rows: the cell, and whether this stage gives its throughput columns or its latency columns. */
  grid?: { input: number; output: number; role: 'throughput' | 'latency' };
  /** Which rule chose the window, and where it lay (seconds from the row's start). */
  window?: {
    rule: 'steady' | 'batch';
    startS: number;
    lengthS: number;
    /** Where the window lay on the run's clock (the records' ms): figures recompute from requests.jsonl over it. */
    fromMs?: number;
    toMs?: number;
    /** The window opened at the ramp limit, before the server had settled. */
    unsettled?: boolean;
    /** Throughput rows: the in-flight cap searched in the ramp, and each step's completion rate. */
    capSearch?: CapSearch;
    inFlightAtOpen?: number;
    inFlightAtClose?: number;
  };
  /** Why the row stopped sending before its limit (a streak of fast failures, a server that answers nothing). */
  stoppedEarly?: string;
  /**
   * A time-limited row whose window held fewer requests than a row needs to describe its load (`min`, the window's
   * DEFAULT_MIN_SAMPLES), even kept open to its longest: how many it held, and the --max-seconds that would gather
   * `min` at the rate it sent (0 when it sent nothing to go by).
   */
  fewRequests?: { held: number; min: number; suggestedMaxSeconds: number };
  /** The row stopped on its stall limit with not one request completed: the server answered nothing. */
  serverSilent?: boolean;
  /** Why the row's figures may not describe a steady state (printed under the table). */
  steadyWarnings?: string[];
  /** Open loop: why the row was overloaded (it did not keep up with its target), when it was. */
  overload?: string;
  /** Before the row: how long the run waited for the server to be idle, and whether it was (run-command). */
  idleWait?: { waitedS: number; idle: boolean; method: string };
  /**
   * Share of prompt tokens served from the server's prefix cache, 0..1: Σ cached / Σ prompt tokens of the measured
   * successes whose usage reported it (`prefixCacheSource: 'usage'`), else the server's counters or gauge over the row.
   */
  prefixCacheHitRate?: number;
  prefixCacheSource?: 'usage' | 'server-counters' | 'server-gauge';
  /**
   * Speculative decoding as the server reported it per request (SGLang `meta_info.spec_verify_ct`): mean tokens
   * produced per verify pass (Σ output tokens / Σ verify passes, SGLang's own "accept length"), over `requests`.
   */
  specAcceptLength?: { tokensPerVerify: number; verifySteps: number; requests: number };
  /** `--steady-state`: the row's figures over the stretch where requests in flight held steady (null: none found). */
  steadyState?: SteadyStateFigures | null;
  /**
   * Conversations (--turns, session traces) with a measured turn: how many, their turns, first send → last reply of
   * each, and the prefix-cache hit rate of first and later turns (from usage) — the later turns resend the history.
   */
  sessions?: { count: number; meanTurns: number; durationMs: Stats; prefixCacheHitRateFirstTurn?: number; prefixCacheHitRateLaterTurns?: number };
  /**
   * The server reported cached prompt tokens although the workload shares no prefix on purpose: per request in its
   * usage, or (source 'server-metrics') only as a hit rate over the row in its own /metrics (requests: the row's).
   */
  unintendedCache?: { requests: number; meanCachedTokens: number; shareOfPromptTokens: number; source?: 'server-metrics' };
  /**
   * retried: requests sent again on a fresh connection, not failures (absent = none). warmup: sent in the ramp-up;
   * cooldown: sent after the window closed while the load stayed on for its last requests; cooldownCut: unmeasured
   * requests (the cool-down's, a ramp-up straggler) cancelled once those had finished (kept in requests.jsonl; absent = none).
   */
  requests: { total: number; ok: number; errors: number; incomplete: number; warmup: number; retried?: number; cooldown?: number; cooldownCut?: number };
  /** Failed requests by error code; HTTP errors as `E_HTTP_STATUS:<status>`. */
  errorsByCode: Record<string, number>;
  /** errors / (ok + errors): requests cut by the run's end or a stop are counted apart, as incomplete. */
  failureShare: number;
  /** First error message seen, to print in place of figures when nothing succeeded. */
  firstError?: string;
  requestThroughput: number;
  /** Embeddings: texts per request (`--batch-size`) and texts embedded per second (request throughput × that). */
  inputsPerRequest?: number;
  inputThroughput?: number;
  outputTokenThroughput: number;
  promptTokenThroughput: number;
  totalTokenThroughput: number;
  /** Requests sent per second inside the window (open loop: compare with targetRate). Never the throughput's division. */
  sendRate: number;
  /** Completions of any outcome (ok or failed) per second inside the window: compare with sendRate. */
  completionRate?: number;
  /**
   * Open loop only: the row did not keep up — it sent under 95% of its target rate, or completions fell under 90%
   * of sends, or the requests in flight grew through the window (see `overload`).
   */
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
  /**
   * With --slo: the share of the row's measured requests that met every limit, in percent. Failed and cut requests
   * count as misses, so "99% attainment of ttft ≤ 300 ms" is "p99 TTFT ≤ 300 ms" counting failures as infinite.
   */
  sloAttainment?: { percent: number; met: number; of: number };
  /** The row was stopped early because its queue kept growing (capacity probes); says what was seen. */
  overSaturated?: string;
  /**
   * A row that stopped early (over-saturated, or a streak of failures): every request it sent, ramp-up included, and
   * how they ended — what "ok/sent" shows when the window measured nothing (report/row-status.ts).
   */
  beforeStop?: { sent: number; ok: number; failed: number; cut: number };
  /** `--repeat N`: the 95% intervals of the main figures over the repeats (metrics/repeats.ts). */
  intervals?: Record<string, RepeatInterval>;
  /** `--repeat N`: each repeat's own row; the row's figures are their means. */
  repeats?: StageSummary[];
  /** `--repeat N`: which repeat (0-based) this is, inside `repeats`. */
  repeat?: number;
  /** The server's own gauges over the row, from its Prometheus /metrics (when it has one). */
  server?: ServerTelemetry;
  interrupted: boolean;
}

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

export function summarizeStage(result: StageResult, slo?: Slo, options: { steadyState?: boolean } = {}): StageSummary {
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
  const okDone = steady ? (fig?.okCompletions ?? 0) : acc.ok;
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
 * minSamples / (rate × extendFactor) would do; a quarter more for noise.
 */
function fewRequests(s: StageSummary, rules: WindowRules | undefined): StageSummary['fewRequests'] {
  if (!rules || rules.measureMs === undefined || rules.measureRequests !== undefined || s.interrupted || s.stoppedEarly) return undefined;
  const held = s.requests.total;
  if (held >= rules.minSamples) return undefined;
  const rate = s.sendRate > 0 ? s.sendRate : s.completionRate ?? 0;
  const suggestedMaxSeconds = rate > 0 ? Math.ceil((1.25 * rules.minSamples) / (rate * rules.extendFactor)) : 0;
  return { held, min: rules.minSamples, suggestedMaxSeconds };
}

/** Reasons a windowed row's figures may not describe the steady state its label promises. */
function steadyWarnings(s: StageSummary, unsettled: boolean): string[] {
  const out: string[] = [];
  const cap = capMismatch(s.window?.capSearch);
  if (cap) out.push(cap);
  if (unsettled) out.push(`the ramp-up had not settled after ${(s.window?.startS ?? 0).toFixed(1)} s (its requests were still getting slower): the window opened anyway`);
  const e2e = s.metrics.e2eMs?.median;
  if (e2e !== undefined && s.durationS > 0 && e2e / 1000 > s.durationS) {
    out.push(`requests took ${(e2e / 1000).toFixed(1)} s (median), longer than the ${s.durationS.toFixed(1)}-s window: the window holds less than one request's lifetime, so the load may not have settled in it; raise --max-seconds to ${Math.ceil((2 * e2e) / 1000)} or more`);
  }
  if (s.requests.ok > 0 && s.requests.ok < MIN_PERCENTILE_SAMPLES) {
    out.push(`${s.requests.ok} successful requests: percentiles rest on fewer than ${MIN_PERCENTILE_SAMPLES} samples`);
  }
  return out;
}
