import { z } from 'zod';
import type { StageSummary } from '../metrics/summary.js';
import type { RunSummaryDoc } from '../report/run-summary.js';
import { capacitySchema, sloAttainmentSchema } from './capacity-schema.js';

/** The newest schema this build writes; files from newer builds are read as far as their fields are known. */
export const SUPPORTED_SCHEMA_VERSION = 1;

// JSON has no NaN: a figure that was NaN comes back as null.
const num = z.number().nullable().transform((v) => v ?? Number.NaN);

const stats = z.object({
  count: z.number(),
  mean: num,
  median: num,
  p90: num,
  p95: num,
  p99: num,
  min: num,
  max: num,
  stddev: num.default(Number.NaN),
});

const slo = z.object({ ttftMs: z.number().optional(), itlMs: z.number().optional(), e2eMs: z.number().optional() });

const stage = z.object({
  index: z.number(),
  label: z.string(),
  kind: z.enum(['closed', 'open', 'burst']),
  concurrency: z.number().optional(),
  targetRate: z.number().optional(),
  durationS: num,
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
  errorsByCode: z.record(z.string(), z.number()).default({}),
  failureShare: z.number().default(0),
  firstError: z.string().optional(),
  requestThroughput: num,
  outputTokenThroughput: num,
  promptTokenThroughput: num.default(Number.NaN),
  totalTokenThroughput: num.default(Number.NaN),
  sendRate: num.default(Number.NaN),
  belowTarget: z.boolean().default(false),
  meanConcurrency: num.default(Number.NaN),
  metrics: z.record(z.string(), stats).default({}),
  outputLengthMismatches: z.number().default(0),
  promptLengthMismatches: z.number().default(0),
  tokenCountSources: z.record(z.string(), z.number()).default({}),
  goodput: z.object({ slo, requestsPerS: z.number(), good: z.number() }).optional(),
  sloAttainment: sloAttainmentSchema.optional(),
  overSaturated: z.string().optional(),
  beforeStop: z.object({ sent: z.number(), ok: z.number(), failed: z.number(), cut: z.number() }).optional(),
  repeat: z.number().optional(),
  intervals: z.record(z.string(), z.object({ mean: num, halfWidth: num, stddev: num, n: z.number(), values: z.array(num) })).optional(),
  // Each repeat's own row (the same shape); read loosely: reports show the intervals, not the repeats.
  repeats: z.array(z.any()).optional(),
  completionRate: num.optional(),
  grid: z.object({ input: z.number(), output: z.number(), role: z.enum(['throughput', 'latency']) }).optional(),
  window: z
    .object({
      rule: z.enum(['steady', 'batch']),
      startS: z.number(),
      lengthS: z.number(),
      unsettled: z.boolean().optional(),
      capSearch: z
        .object({
          cap: z.number(),
          steps: z.array(z.object({ cap: z.number(), completionRate: num, queued: z.boolean().optional() })),
          measuredInFlight: z.object({ mean: z.number(), max: z.number() }).optional(),
        })
        .optional(),
      inFlightAtOpen: z.number().optional(),
      inFlightAtClose: z.number().optional(),
    })
    .optional(),
  stoppedEarly: z.string().optional(),
  fewRequests: z.object({ held: z.number(), min: z.number(), suggestedMaxSeconds: z.number() }).optional(),
  serverSilent: z.boolean().optional(),
  steadyWarnings: z.array(z.string()).optional(),
  overload: z.string().optional(),
  unintendedCache: z.object({ requests: z.number(), meanCachedTokens: z.number(), shareOfPromptTokens: z.number(), source: z.literal('server-metrics').optional() }).optional(),
  idleWait: z.object({ waitedS: z.number(), idle: z.boolean(), method: z.string() }).optional(),
  server: z
    .object({
      samples: z.number(),
      peakRunning: z.number().optional(),
      peakWaiting: z.number().optional(),
      peakKvUsage: z.number().optional(),
      meanKvUsage: z.number().optional(),
      preemptions: z.number().optional(),
      prefixCacheHitRate: z.number().optional(),
      prefixCacheSource: z.enum(['server-counters', 'server-gauge']).optional(),
      specDecode: z.object({ draftTokens: z.number(), acceptedTokens: z.number(), acceptanceRate: z.number() }).optional(),
    })
    .optional(),
  prefixCacheHitRate: z.number().optional(),
  prefixCacheSource: z.enum(['usage', 'server-counters', 'server-gauge']).optional(),
  specAcceptLength: z.object({ tokensPerVerify: z.number(), verifySteps: z.number(), requests: z.number() }).optional(),
  steadyState: z
    .object({
      startS: num,
      lengthS: num,
      inFlightMedian: num,
      band: z.tuple([num, num]),
      requestThroughput: num,
      outputTokenThroughput: num,
      sendRate: num,
      ttftMs: stats.optional(),
      itlMs: stats.optional(),
    })
    .nullable()
    .optional(),
  sessions: z
    .object({ count: z.number(), meanTurns: z.number(), durationMs: stats, prefixCacheHitRateFirstTurn: z.number().optional(), prefixCacheHitRateLaterTurns: z.number().optional() })
    .optional(),
  interrupted: z.boolean().default(false),
});

const context = z.object({
  model: z.string(),
  engine: z.string(),
  engineVersion: z.string().optional(),
  gpu: z.string().optional(),
  gpus: z.number().optional(),
  quant: z.string().optional(),
  kvCacheDtype: z.string().optional(),
  promptTokens: z.number().optional(),
  outputTokens: z.number().optional(),
  predicted: z.boolean().optional(),
  label: z.string().optional(),
  lengths: z.string().optional(),
});

const lengthDist = z.union([
  z.object({ kind: z.literal('fixed'), value: z.number() }),
  z.object({ kind: z.literal('uniform'), min: z.number(), max: z.number() }),
  z.object({ kind: z.literal('normal'), mean: z.number(), stddev: z.number(), min: z.number().optional(), max: z.number().optional() }),
  z.object({ kind: z.literal('exponential'), mean: z.number(), min: z.number().optional(), max: z.number().optional() }),
]);

/** summary.json `workloadSpec` (added beside the prose `workload`; older files have none). */
const workloadSpec = z.object({
  kind: z.enum(['synthetic', 'dataset', 'conversation', 'trace', 'grid']),
  promptTokens: lengthDist.optional(),
  outputTokens: lengthDist.optional(),
  inputLens: z.array(z.number()).optional(),
  outputLens: z.array(z.number()).optional(),
  numPrompts: z.number().optional(),
  tokenizer: z.string().optional(),
  dataset: z.object({ path: z.string(), column: z.string().optional(), numPrompts: z.number().optional() }).optional(),
  trace: z.object({ path: z.string(), timeScale: z.number().optional() }).optional(),
  scenario: z.string().optional(),
  sharedPrefix: z.object({ tokens: z.number(), groups: z.number() }).optional(),
  turns: lengthDist.optional(),
  thinkTimeMs: lengthDist.optional(),
  chat: z.boolean().optional(),
  forcedOutputLength: z.boolean().optional(),
  stream: z.boolean().optional(),
});

/** The client's health over the run (metrics/health.ts); older files have none. */
const health = z.object({
  dispatchLagP99Ms: z.number(),
  connectWaitP99Ms: z.number().default(0),
  eventLoopDelayP99Ms: z.number(),
  clientCpuShare: z.number(),
  clientLimited: z.boolean(),
  warning: z.string().optional(),
  dispatchLagSamples: z.number().optional(),
  mainThreadCpuShare: z.number().optional(),
  cpuWaitShare: z.number().optional(),
  workers: z
    .array(z.object({ index: z.number(), eventLoopUtilization: z.number(), eventLoopDelayP99Ms: z.number(), requests: z.number() }))
    .optional(),
});

const shardInfo = z.object({
  index: z.number(),
  count: z.number(),
  runKey: z.string(),
  seed: z.number(),
  startAt: z.string().optional(),
  startedAt: z.string(),
  startOffsetMs: z.number().optional(),
  epochOriginMs: z.number(),
});

const mergedFrom = z.object({
  runKey: z.string(),
  shards: z.array(
    z.object({ index: z.number(), dir: z.string(), requests: z.number(), startedAt: z.string(), startOffsetMs: z.number().optional(), clockShiftMs: z.number() }),
  ),
  rowStartSkewMs: z.number(),
});

export const summarySchema = z.object({
  schemaVersion: z.number().int().default(1),
  tool: z.object({ name: z.literal('inferbench'), version: z.string() }).default({ name: 'inferbench', version: 'unknown' }),
  runId: z.string().default(''),
  createdAt: z.string().default(''),
  finishedAt: z.string().default(''),
  layout: z.enum(['sweep', 'grid']),
  context,
  target: z
    .object({
      url: z.string().optional(),
      api: z.string().default('unknown'),
      engine: z.string().default('unknown'),
      model: z.string().default(''),
      simulated: z.boolean().default(false),
      detection: z.string().optional(),
    })
    .default({ api: 'unknown', engine: 'unknown', model: '', simulated: false }),
  profile: z.string().default(''),
  workload: z.string().default(''),
  workloadSpec: workloadSpec.optional(),
  windowRules: z.string().default(''),
  stages: z.array(stage),
  capacity: capacitySchema.optional(),
  health: health.optional(),
  workers: z.number().optional(),
  shard: shardInfo.optional(),
  merged: mergedFrom.optional(),
  interrupted: z.boolean().default(false),
  notes: z.array(z.string()).default([]),
  outDir: z.string().optional(),
});

/** manifest.json: only what the store shows; everything else stays in the file. */
export const manifestSchema = z.object({
  schemaVersion: z.number().int().default(1),
  createdAt: z.string().optional(),
  command: z.string().optional(),
  seed: z.number().optional(),
  node: z.string().optional(),
  /** `inferbench import`: the other tool's file the run was made from. */
  source: z.object({ tool: z.string(), version: z.string(), file: z.string() }).optional(),
});

export type ParsedSummary = z.infer<typeof summarySchema>;
export type ParsedManifest = z.infer<typeof manifestSchema>;

// Compile-time proof that a parsed file is what the table renderers take.
const _stageFits = (s: z.infer<typeof stage>): StageSummary => s;
const _docFits = (d: ParsedSummary): RunSummaryDoc => d;
void _stageFits;
void _docFits;

/** First problem of a failed parse, as "at stages.0.label: expected string". */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  const at = issue.path.length ? ` at ${issue.path.join('.')}` : '';
  return `${issue.message}${at}`;
}
