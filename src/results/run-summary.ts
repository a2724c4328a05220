import { z } from 'zod';
import { capacitySchema } from './capacity.js';
import { runPowerSchema } from './energy.js';
import { stageSummarySchema } from './stage.js';

/** The line above a run's tables: what was measured, on what (report/layouts.ts renders it). */
export const tableContextSchema = z.object({
  model: z.string(),
  engine: z.string(),
  engineVersion: z.string().optional(),
  gpu: z.string().optional(),
  gpus: z.number().optional(),
  quant: z.string().optional(),
  /** The simulated engine's KV-cache element type (auto | fp8 | int8): predictions and built-in simulator runs. */
  kvCacheDtype: z.string().optional(),
  promptTokens: z.number().optional(),
  outputTokens: z.number().optional(),
  /** Figures come from the simulator in virtual time, not from a measurement. */
  predicted: z.boolean().optional(),
  label: z.string().optional(),
  /** Used instead of prompt/output tokens when lengths vary (distributions, datasets, traces). */
  lengths: z.string().optional(),
});
export type TableContext = z.output<typeof tableContextSchema>;

/** A token-length distribution as `--prompt-dist` takes it; every sample is an integer ≥ 1 (and ≤ max where given). */
export const lengthDistSchema = z.union([
  z.object({ kind: z.literal('fixed'), value: z.number() }),
  z.object({ kind: z.literal('uniform'), min: z.number(), max: z.number() }),
  z.object({ kind: z.literal('normal'), mean: z.number(), stddev: z.number(), min: z.number().optional(), max: z.number().optional() }),
  z.object({ kind: z.literal('exponential'), mean: z.number(), min: z.number().optional(), max: z.number().optional() }),
]);
export type LengthDist = z.output<typeof lengthDistSchema>;

/**
 * summary.json `workloadSpec`: the workload as fields (the prose is `workload`; older files have none). Lengths are
 * distributions as `--prompt-dist` takes them (`{kind: 'fixed', value: 512}`, `{kind: 'uniform', min, max}` …).
 */
export const workloadSpecSchema = z.object({
  kind: z.enum(['synthetic', 'dataset', 'conversation', 'trace', 'grid']),
  /** Prompt lengths in tokens (conversations: each user turn's). */
  promptTokens: lengthDistSchema.optional(),
  /** Requested output lengths in tokens; absent for a dataset that keeps its own. */
  outputTokens: lengthDistSchema.optional(),
  /** Grid: the cells and the burst size of each. */
  inputLens: z.array(z.number()).optional(),
  outputLens: z.array(z.number()).optional(),
  numPrompts: z.number().optional(),
  /** How prompt lengths were counted: `server /tokenize`, `approx (o200k_base)`, or a tokenizer.json path. */
  tokenizer: z.string().optional(),
  dataset: z.object({ path: z.string(), column: z.string().optional(), numPrompts: z.number().optional() }).optional(),
  trace: z.object({ path: z.string(), timeScale: z.number().optional() }).optional(),
  /** genai-bench scenario string, as given. */
  scenario: z.string().optional(),
  sharedPrefix: z.object({ tokens: z.number(), groups: z.number() }).optional(),
  turns: lengthDistSchema.optional(),
  thinkTimeMs: lengthDistSchema.optional(),
  /** Requests go to a chat endpoint (messages) rather than a completions one (prompt). */
  chat: z.boolean().optional(),
  /** ignore_eos/min_tokens were sent so every reply has the requested length. */
  forcedOutputLength: z.boolean().optional(),
  stream: z.boolean().optional(),
  /** Embeddings runs: texts per request (`--batch-size`). */
  inputsPerRequest: z.number().optional(),
  /** `--images`: synthetic images on every request (noise PNGs of width × height pixels). */
  images: z.object({ count: z.number(), width: z.number(), height: z.number() }).optional(),
});
export type WorkloadSpecDoc = z.output<typeof workloadSpecSchema>;

/** `run --workers N`: one load worker thread's own event loop. */
export const workerStatsSchema = z.object({
  index: z.number(),
  /** Share of wall time its event loop was busy (0–1). */
  eventLoopUtilization: z.number(),
  eventLoopDelayP99Ms: z.number(),
  requests: z.number(),
});
export type WorkerStats = z.output<typeof workerStatsSchema>;

/** The client's health over the run (metrics/health.ts); older files have none. */
export const clientHealthSchema = z.object({
  /** Send time minus target time, less any wait for a concurrency slot or a connection: the client's own lateness. */
  dispatchLagP99Ms: z.number(),
  /**
   * Time spent opening connections before sending (p99 over non-burst rows): the network's and the server's
   * time, e.g. a new connection per request to a server that closes each one after its reply. Not client lag.
   */
  connectWaitP99Ms: z.number().default(0),
  eventLoopDelayP99Ms: z.number(),
  /** Client CPU time / wall time (1 = one core fully busy). */
  clientCpuShare: z.number(),
  clientLimited: z.boolean(),
  warning: z.string().optional(),
  /** Requests whose dispatch lag was measured (paced rows' windows); 0: dispatchLagP99Ms is no measurement (shown as —). */
  dispatchLagSamples: z.number().optional(),
  /**
   * The main thread's own CPU time / wall time (Linux): the client's event loop alone, without the built-in
   * simulator's or load workers' threads that clientCpuShare counts too.
   */
  mainThreadCpuShare: z.number().optional(),
  /** Time the main thread was ready to run but waited for a CPU, over wall time (Linux schedstat): other work held the cores. */
  cpuWaitShare: z.number().optional(),
  /** `run --workers N`: each load worker thread's own event loop (this figure set is the coordinator's). */
  workers: z.array(workerStatsSchema).optional(),
});
export type ClientHealth = z.output<typeof clientHealthSchema>;

/** What a shard records about itself (manifest.json and summary.json `shard`), and what merge checks. */
export const shardInfoSchema = z.object({
  index: z.number(),
  count: z.number(),
  /** Hash of every option that shapes the load (not --shard, --out, --start-at, output styles): equal on every shard of one run. */
  runKey: z.string(),
  seed: z.number(),
  /** The instant every shard was told to start (ISO-8601), when --start-at was given. */
  startAt: z.string().optional(),
  /** When this shard actually started its first row (ISO-8601, its own wall clock). */
  startedAt: z.string(),
  /** startedAt − startAt, ms: how late this shard started (image pull, a slow node). */
  startOffsetMs: z.number().optional(),
  /** `--barrier`: the folder the shards met in before every row. */
  barrier: z.string().optional(),
  /** Wall clock (epoch ms) at this process's performance.now() = 0: merge puts every shard's stamps on one time line. */
  epochOriginMs: z.number(),
});
export type ShardInfo = z.output<typeof shardInfoSchema>;

/** What a merged run records about where it came from (summary.json `merged`). */
export const mergedFromSchema = z.object({
  runKey: z.string(),
  shards: z.array(
    z.object({
      index: z.number(),
      dir: z.string(),
      requests: z.number(),
      startedAt: z.string(),
      startOffsetMs: z.number().optional(),
      /** Where this shard's clock put its stamps relative to shard 0's, ms (from the wall clocks: NTP-synced hosts). */
      clockShiftMs: z.number(),
    }),
  ),
  /** Largest spread between the shards' starts of one row, ms. */
  rowStartSkewMs: z.number(),
});
export type MergedFrom = z.output<typeof mergedFromSchema>;

/** summary.json without its `schemaVersion`: everything needed to re-render a run's tables without its requests. */
export const runSummaryDocSchema = z.object({
  tool: z.object({ name: z.literal('inferbench'), version: z.string() }).default({ name: 'inferbench', version: 'unknown' }),
  runId: z.string().default(''),
  createdAt: z.string().default(''),
  finishedAt: z.string().default(''),
  layout: z.enum(['sweep', 'grid']),
  context: tableContextSchema,
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
  /** The workload in words (kept for readers of older files; the fields are `workloadSpec`). */
  workload: z.string().default(''),
  workloadSpec: workloadSpecSchema.optional(),
  /** How the measured window is chosen, printed with the results. */
  windowRules: z.string().default(''),
  stages: z.array(stageSummarySchema),
  /** `--profile capacity`: the search's answer. */
  capacity: capacitySchema.optional(),
  health: clientHealthSchema.optional(),
  /** `run --workers N`: load worker threads that sent the requests. */
  workers: z.number().optional(),
  /** `run --shard I/N`: this folder holds one shard's part of a run (merge joins them). */
  shard: shardInfoSchema.optional(),
  /** `inferbench merge`: the shards this run was merged from. */
  merged: mergedFromSchema.optional(),
  /** `run --power`: what was asked for and what was read (null `found`: no source). */
  power: runPowerSchema.optional(),
  interrupted: z.boolean().default(false),
  notes: z.array(z.string()).default([]),
  outDir: z.string().optional(),
});
export type RunSummaryDoc = z.output<typeof runSummaryDocSchema>;

/** summary.json as read from disk: the document and the schema version it was written with (absent in the oldest). */
export const summaryFileSchema = runSummaryDocSchema.extend({ schemaVersion: z.number().int().default(1) });
export type SummaryFile = z.output<typeof summaryFileSchema>;

/** manifest.json `source`: for `inferbench import`, the other tool's file the run was made from. */
export const importSourceSchema = z.object({ tool: z.string(), version: z.string(), file: z.string() });
export type ImportSource = z.output<typeof importSourceSchema>;

/** manifest.json as the store reads it: only what the store shows; every other field stays in the file. */
export const manifestSchema = z.object({
  schemaVersion: z.number().int().default(1),
  createdAt: z.string().optional(),
  command: z.string().optional(),
  seed: z.number().optional(),
  node: z.string().optional(),
  source: importSourceSchema.optional(),
});
export type ParsedManifest = z.output<typeof manifestSchema>;
