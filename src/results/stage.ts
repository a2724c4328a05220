import { z } from 'zod';
import { isMetricName, type MetricName } from './metric-names.js';
import { energySchema } from './energy.js';
import { figure, sloSchema, statsSchema, type Stats } from './stats.js';

/** A row's metrics by name; names this build does not know (a newer file's) are left out, as unknown fields are. */
const metricsSchema = z.record(z.string(), statsSchema).transform((all) => {
  const known: Partial<Record<MetricName, Stats>> = {};
  for (const [name, stats] of Object.entries(all)) if (isMetricName(name)) known[name] = stats;
  return known;
});

/** Throughput rows: the in-flight cap searched in the ramp, and each step's completion rate (load/window.ts). */
export const capSearchSchema = z.object({
  cap: z.number(),
  // A step that queued at the server: how many requests the server served at once (`servingAtOnce`, where the search goes down to).
  steps: z.array(z.object({ cap: z.number(), completionRate: figure, queued: z.boolean().optional(), servingAtOnce: z.number().optional() })),
  measuredInFlight: z.object({ mean: z.number(), max: z.number() }).optional(),
});
export type CapSearch = z.output<typeof capSearchSchema>;

/**
 * The server's gauges over a row's measured window only (the periodic /metrics samples taken inside it; a throughput
 * row's cap search and every ramp-up lie outside). Running and waiting are read at one moment, the busiest sample:
 * so they add up to what the server held then.
 */
export const serverWindowGaugesSchema = z.object({
  /** Periodic samples inside the window (fewer than two describe no peak). */
  samples: z.number(),
  /** The busiest sample: the most requests the server held (running + waiting), and its running and waiting then. */
  peakRunningPlusWaiting: z.number().optional(),
  runningAtPeak: z.number().optional(),
  waitingAtPeak: z.number().optional(),
  /** Means over the window's samples (they are taken at a fixed interval: a time average). */
  meanRunning: z.number().optional(),
  meanWaiting: z.number().optional(),
  peakKvUsage: z.number().optional(),
  meanKvUsage: z.number().optional(),
});
export type ServerWindowGauges = z.output<typeof serverWindowGaugesSchema>;

/**
 * The server's own gauges over a row, from its Prometheus /metrics (transport/prometheus.ts). The peak and mean
 * fields at this level cover the whole row, ramp-up and a throughput row's cap search included, each its own maximum
 * (running and waiting peaks may come from different moments); `window` holds the measured window's.
 */
export const serverTelemetrySchema = z.object({
  samples: z.number(),
  peakRunning: z.number().optional(),
  peakWaiting: z.number().optional(),
  peakKvUsage: z.number().optional(),
  meanKvUsage: z.number().optional(),
  preemptions: z.number().optional(),
  /**
   * The server's prefix-cache hit rate over the row, 0..1: hit tokens / queried tokens from its counters' increase
   * (vLLM), else the mean of its hit-rate gauge (SGLang).
   */
  prefixCacheHitRate: z.number().optional(),
  prefixCacheSource: z.enum(['server-counters', 'server-gauge']).optional(),
  /** Speculative decoding over the row, from the counters' increase: accepted / draft tokens. */
  specDecode: z.object({ draftTokens: z.number(), acceptedTokens: z.number(), acceptanceRate: z.number() }).optional(),
  /** Over the measured window only (absent in runs written before it was recorded, and for rows without a window). */
  window: serverWindowGaugesSchema.optional(),
  /** Several --target URLs: the row's gauges are the replicas' summed (running, waiting) and their fullest KV cache. */
  replicas: z.number().optional(),
});
export type ServerTelemetry = z.output<typeof serverTelemetrySchema>;

/** `--steady-state`: a row's figures over the stretch where requests in flight held steady (metrics/steady-state.ts). */
export const steadyStateSchema = z.object({
  /** Seconds from the row's start, and length. */
  startS: figure,
  lengthS: figure,
  /** The plateau and the band the count stayed in. */
  inFlightMedian: figure,
  band: z.tuple([figure, figure]),
  requestThroughput: figure,
  outputTokenThroughput: figure,
  sendRate: figure,
  ttftMs: statsSchema.optional(),
  itlMs: statsSchema.optional(),
});
export type SteadyStateFigures = z.output<typeof steadyStateSchema>;

/** `--repeat N`: one figure's 95% interval over the repeats (metrics/repeats.ts). */
export const repeatIntervalSchema = z.object({
  mean: figure,
  /** 95% two-sided Student-t half-width (0 with one value). */
  halfWidth: figure,
  stddev: figure,
  n: z.number(),
  values: z.array(figure),
});
export type RepeatInterval = z.output<typeof repeatIntervalSchema>;

/**
 * One replica's part of a row (several --target URLs, or a router's --replica-header): its measured requests and
 * their figures (same definitions as the row's), and the replica's own /metrics where it has them.
 */
export const replicaFiguresSchema = z.object({
  index: z.number(),
  /** The endpoint (--target's list); a router's replica: the header's value. */
  url: z.string().optional(),
  name: z.string().optional(),
  sent: z.number(),
  ok: z.number(),
  errors: z.number(),
  incomplete: z.number(),
  ttftMs: z.object({ p50: figure, p99: figure }).optional(),
  itlMs: z.object({ p50: figure, p99: figure }).optional(),
  /** Output tokens of the replica's measured successes over the row's window length (the row's own division). */
  outputTokenThroughput: figure,
  /** Mean requests the client had in flight on the replica over the row's window (ramp-up and cool-down requests included). */
  meanInFlight: z.number().optional(),
  /** Σ cached / Σ prompt tokens where usage reported them, else the replica's own /metrics over the row. */
  prefixCacheHitRate: z.number().optional(),
  prefixCacheSource: z.enum(['usage', 'server-counters', 'server-gauge']).optional(),
  /** The replica stopped answering (connections refused) during the row: when (s from the row's start) and the error. */
  down: z.object({ atS: z.number(), error: z.string() }).optional(),
  server: serverTelemetrySchema.optional(),
});
export type ReplicaFigures = z.output<typeof replicaFiguresSchema>;

/** One predicted figure's interval: the true figure lies in [low, high] at the intervals' level. */
export const predictionRangeSchema = z.object({
  low: figure,
  high: figure,
  /** Which residuals it was read from (`ttft|loaded`, `itl|gpu` out of family, `calibration itl` …). */
  source: z.string().optional(),
});

/**
 * `predict` rows: intervals on the predicted figures (latencies: their means) at `level` percent, from held-out
 * residuals of published tables (`basis: published`, widened for a GPU/engine/model family/quantization no table
 * covers: `unseen`) or from a `--calibrate-from` fit (`basis: calibration`). docs/accuracy.md says how.
 */
export const predictionIntervalsSchema = z.object({
  level: z.number(),
  basis: z.enum(['published', 'calibration']).optional(),
  /** The row's load regime as the residuals classify it: low, loaded, saturated. */
  regime: z.enum(['low', 'loaded', 'saturated']).optional(),
  unseen: z.array(z.string()).optional(),
  ttftMs: predictionRangeSchema.optional(),
  itlMs: predictionRangeSchema.optional(),
  e2eMs: predictionRangeSchema.optional(),
  outputTokenThroughput: predictionRangeSchema.optional(),
  requestThroughput: predictionRangeSchema.optional(),
});
export type PredictionIntervals = z.output<typeof predictionIntervalsSchema>;

/** With --slo: the share of the row's measured requests that met every limit, in percent. */
export const sloAttainmentSchema = z.object({ percent: z.number(), met: z.number(), of: z.number() });

/** One table row (summary.json `stages[]`): a stage's figures over its measured window (warm-up excluded). */
export const stageSummarySchema = z.object({
  index: z.number(),
  label: z.string(),
  kind: z.enum(['closed', 'open', 'burst']),
  concurrency: z.number().optional(),
  targetRate: z.number().optional(),
  /**
   * Length of the window the rates divide by, seconds: the steady window (window.ts) for windowed rows, first send →
   * last completion of measured requests for batch rows.
   */
  durationS: figure,
  /** When the row started and ended on the run's clock (the records' ms). */
  startedAtMs: z.number().optional(),
  endedAtMs: z.number().optional(),
  /** Grid rows: the cell, and whether this stage gives its throughput columns or its latency columns. */
  grid: z.object({ input: z.number(), output: z.number(), role: z.enum(['throughput', 'latency']) }).optional(),
  /** Which rule chose the window, and where it lay (seconds from the row's start). */
  window: z
    .object({
      rule: z.enum(['steady', 'batch']),
      startS: z.number(),
      lengthS: z.number(),
      /** Where the window lay on the run's clock (the records' ms): figures recompute from requests.jsonl over it. */
      fromMs: z.number().optional(),
      toMs: z.number().optional(),
      /** The window opened at the ramp limit, before the server had settled. */
      unsettled: z.boolean().optional(),
      /** Throughput rows: the in-flight cap searched in the ramp, and each step's completion rate. */
      capSearch: capSearchSchema.optional(),
      inFlightAtOpen: z.number().optional(),
      inFlightAtClose: z.number().optional(),
    })
    .optional(),
  /** Why the row stopped sending before its limit (a streak of fast failures, a server that answers nothing). */
  stoppedEarly: z.string().optional(),
  /**
   * A time-limited row whose window held fewer requests than a row needs to describe its load (`min`, the window's
   * DEFAULT_MIN_SAMPLES), even kept open to its longest: how many it held, and the --max-seconds that would gather
   * `min` at the rate it sent (0 when it sent nothing to go by); `extendFactor`: how far a window of --max-seconds
   * stretches for them; `sizedLimitS`: a sweep row's longest window for them (its rate needed longer).
   */
  fewRequests: z.object({ held: z.number(), min: z.number(), suggestedMaxSeconds: z.number(), extendFactor: z.number().optional(), sizedLimitS: z.number().optional() }).optional(),
  /** The row stopped on its stall limit with not one request completed: the server answered nothing. */
  serverSilent: z.boolean().optional(),
  /** Why the row's figures may not describe a steady state (printed under the table). */
  steadyWarnings: z.array(z.string()).optional(),
  /** Open loop: why the row was overloaded (it did not keep up with its target), when it was. */
  overload: z.string().optional(),
  /** Before the row: how long the run waited for the server to be idle, and whether it was (run-command). */
  idleWait: z.object({ waitedS: z.number(), idle: z.boolean(), method: z.string() }).optional(),
  /**
   * Share of prompt tokens served from the server's prefix cache, 0..1: Σ cached / Σ prompt tokens of the measured
   * successes whose usage reported it (`prefixCacheSource: 'usage'`), else the server's counters or gauge over the row.
   */
  prefixCacheHitRate: z.number().optional(),
  prefixCacheSource: z.enum(['usage', 'server-counters', 'server-gauge']).optional(),
  /**
   * Speculative decoding as the server reported it per request (SGLang `meta_info.spec_verify_ct`): mean tokens
   * produced per verify pass (Σ output tokens / Σ verify passes, SGLang's own "accept length"), over `requests`.
   */
  specAcceptLength: z.object({ tokensPerVerify: z.number(), verifySteps: z.number(), requests: z.number() }).optional(),
  /** `--steady-state`: the row's figures over the stretch where requests in flight held steady (null: none found). */
  steadyState: steadyStateSchema.nullable().optional(),
  /**
   * Conversations (--turns, session traces) with a measured turn: how many, their turns, first send → last reply of
   * each, and the prefix-cache hit rate of first and later turns (from usage) — the later turns resend the history.
   */
  sessions: z
    .object({
      count: z.number(),
      meanTurns: z.number(),
      durationMs: statsSchema,
      prefixCacheHitRateFirstTurn: z.number().optional(),
      prefixCacheHitRateLaterTurns: z.number().optional(),
    })
    .optional(),
  /**
   * The server reported cached prompt tokens although the workload shares no prefix on purpose: per request in its
   * usage, or (source 'server-metrics') only as a hit rate over the row in its own /metrics (requests: the row's).
   */
  unintendedCache: z
    .object({ requests: z.number(), meanCachedTokens: z.number(), shareOfPromptTokens: z.number(), source: z.literal('server-metrics').optional() })
    .optional(),
  /**
   * retried: requests sent again on a fresh connection, not failures (absent = none). warmup: sent in the ramp-up;
   * cooldown: sent after the window closed while the load stayed on for its last requests; cooldownCut: unmeasured
   * requests (the cool-down's, a ramp-up straggler) cancelled once those had finished (kept in requests.jsonl; absent = none).
   */
  requests: z.object({
    total: z.number(),
    ok: z.number(),
    errors: z.number().default(0),
    incomplete: z.number().default(0),
    warmup: z.number().default(0),
    retried: z.number().optional(),
    cooldown: z.number().optional(),
    cooldownCut: z.number().optional(),
  }),
  /** Failed requests by error code; HTTP errors as `E_HTTP_STATUS:<status>`. */
  errorsByCode: z.record(z.string(), z.number()).default({}),
  /** errors / (ok + errors): requests cut by the run's end or a stop are counted apart, as incomplete. */
  failureShare: z.number().default(0),
  /** First error message seen, to print in place of figures when nothing succeeded. */
  firstError: z.string().optional(),
  requestThroughput: figure,
  /** Embeddings: texts per request (`--batch-size`) and texts embedded per second (request throughput × that). */
  inputsPerRequest: z.number().optional(),
  inputThroughput: z.number().optional(),
  outputTokenThroughput: figure,
  promptTokenThroughput: figure.default(Number.NaN),
  totalTokenThroughput: figure.default(Number.NaN),
  /** Requests sent per second inside the window (open loop: compare with targetRate). Never the throughput's division. */
  sendRate: figure.default(Number.NaN),
  /** Completions of any outcome (ok or failed) per second inside the window: compare with sendRate. */
  completionRate: figure.optional(),
  /**
   * Open loop only: the row did not keep up — it sent under 95% of its target rate, or completions fell under 90%
   * of sends, or the requests in flight grew through the window (see `overload`).
   */
  belowTarget: z.boolean().default(false),
  /** Time-weighted mean of requests in flight. */
  meanConcurrency: figure.default(Number.NaN),
  metrics: metricsSchema.default({}),
  /** Requests whose output length differed from the requested length. */
  outputLengthMismatches: z.number().default(0),
  /** Requests whose server-reported prompt length differed from the client's count. */
  promptLengthMismatches: z.number().default(0),
  tokenCountSources: z.record(z.string(), z.number()).default({}),
  goodput: z.object({ slo: sloSchema, requestsPerS: z.number(), good: z.number() }).optional(),
  /**
   * With --slo: the share of the row's measured requests that met every limit, in percent. Failed and cut requests
   * count as misses, so "99% attainment of ttft ≤ 300 ms" is "p99 TTFT ≤ 300 ms" counting failures as infinite.
   */
  sloAttainment: sloAttainmentSchema.optional(),
  /** The row was stopped early because its queue kept growing (capacity probes); says what was seen. */
  overSaturated: z.string().optional(),
  /**
   * A row that stopped early (over-saturated, or a streak of failures): every request it sent, ramp-up included, and
   * how they ended — what "ok/sent" shows when the window measured nothing (report/row-status.ts).
   */
  beforeStop: z.object({ sent: z.number(), ok: z.number(), failed: z.number(), cut: z.number() }).optional(),
  /** `predict`: intervals on the predicted figures (absent from measured rows). */
  predictionIntervals: predictionIntervalsSchema.optional(),
  /** `--repeat N`: the 95% intervals of the main figures over the repeats (metrics/repeats.ts). */
  intervals: z.record(z.string(), repeatIntervalSchema).optional(),
  /** `--repeat N`: each repeat's own row (the same shape); the row's figures are their means. */
  get repeats(): z.ZodOptional<z.ZodArray<typeof stageSummarySchema>> {
    return z.array(stageSummarySchema).optional();
  },
  /** `--repeat N`: which repeat (0-based) this is, inside `repeats`. */
  repeat: z.number().optional(),
  /** The server's own gauges over the row, from its Prometheus /metrics (when it has one). */
  server: serverTelemetrySchema.optional(),
  /** Several replicas: each one's figures, in --target's order (or by the router's replica number). */
  replicas: z.array(replicaFiguresSchema).optional(),
  /** A replica markedly slower, busier or down compared with the rest (one line per finding, printed under the table). */
  replicaWarnings: z.array(z.string()).optional(),
  /** `--power`: the GPUs' energy over the row's window (results/energy.ts); predict: the simulator's power model. */
  energy: energySchema.optional(),
  interrupted: z.boolean().default(false),
});
export type StageSummary = z.output<typeof stageSummarySchema>;
