/**
 * The run plan: everything a run needs to send exactly the same requests again, resolved once from the options
 * and what the server said, as a plain JSON value (issue 30 item 1). The zod schema is the definition; the
 * TypeScript type is derived from it. Secrets are never part of it (the API key comes from the environment or
 * --api-key when the plan runs).
 */
import { z } from 'zod';
import { configError } from '../core/errors.js';

/** The newest plan layout this build writes and the only one it reads. */
export const PLAN_VERSION = 1;

const positiveInt = z.number().int().positive();
/** JSON has no Infinity: a `--rate inf` row is the string "inf". */
const rate = z.union([z.number().positive(), z.literal('inf')]);
const slo = z.strictObject({ ttftMs: z.number().optional(), itlMs: z.number().optional(), e2eMs: z.number().optional() });
const arrival = z.enum(['constant', 'poisson', 'gamma', 'trace']);

/** The built-in simulated engine the run starts in-process (run without --target, and predict). */
const simTarget = z.strictObject({
  engine: z.string(),
  model: z.string(),
  gpu: z.string(),
  gpus: positiveInt,
  quant: z.string().optional(),
  kvCacheDtype: z.string().optional(),
});

/** What the server said: filled in by the GET probes (and left out by `k8s`, whose pods probe the server themselves). */
const resolvedServer = z.strictObject({
  /** The request format spoken (`virtual`: predict's simulator, which takes token counts). */
  dialect: z.string(),
  model: z.string(),
  engine: z.string(),
  engineVersion: z.string().optional(),
  /** The detection line as printed (`detected: …`). */
  detection: z.string().optional(),
  /** The simulator's own description (`vllm, Llama-3.1-8B on 1× H100 …`) when the target is the built-in one. */
  simDescription: z.string().optional(),
  /** What an `inferbench sim` target said it simulates (its x-sim-* headers): the run records it as --gpu/--gpus/--quant would. */
  simHardware: z.strictObject({ gpu: z.string(), gpus: positiveInt, quant: z.string().optional() }).optional(),
});

const tokenizer = z.strictObject({
  /** What --tokenizer asked for: undefined = the server's /tokenize where it has one, else approx. */
  requested: z.string().optional(),
  /** What the resolution settled on; the plan's run uses exactly this. */
  resolved: z
    .strictObject({
      kind: z.enum(['server', 'approx', 'file', 'none']),
      name: z.string(),
      /** kind file: the tokenizer.json path. */
      path: z.string().optional(),
      /** kind server: the calibration against /tokenize (special tokens each prompt carries, requests it took). */
      calibration: z.strictObject({ specialTokens: z.number().int().min(0), requests: z.number().int().min(0) }).optional(),
    })
    .optional(),
});

const workload = z.strictObject({
  seed: z.number().int().min(0),
  promptTokens: positiveInt,
  outputTokens: positiveInt,
  numPrompts: positiveInt,
  numPromptsGiven: z.boolean(),
  outputTokensGiven: z.boolean(),
  promptDist: z.string().optional(),
  outputDist: z.string().optional(),
  scenario: z.string().optional(),
  data: z.string().optional(),
  dataColumn: z.string().optional(),
  prefixTokens: positiveInt.optional(),
  prefixGroups: positiveInt.optional(),
  turns: z.string().optional(),
  thinkTime: z.string().optional(),
  trace: z.string().optional(),
  timeScale: z.number().positive().optional(),
  images: z.strictObject({ count: positiveInt, width: positiveInt, height: positiveInt }).optional(),
  batchSize: positiveInt.optional(),
  /** The prompts as the run describes them (`512 tokens in, 128 out`); informative. */
  description: z.string().optional(),
});

const capacity = z.strictObject({
  axis: z.enum(['rate', 'concurrency']),
  slo,
  attainment: z.number(),
  maxErrorShare: z.number(),
  precision: z.number(),
  repeats: positiveInt,
  arrival: z.enum(['constant', 'poisson', 'gamma', 'trace']),
  burstiness: z.number().optional(),
  virtualTime: z.boolean().optional(),
});

/** The profile and what shapes its rows: fixed rows are listed; adaptive profiles (sweep, capacity) by their rules. */
const load = z.strictObject({
  profile: z.enum(['synchronous', 'concurrent', 'throughput', 'constant', 'poisson', 'sweep', 'grid', 'replay', 'capacity']),
  rates: z.array(rate).optional(),
  concurrencies: z.array(positiveInt).optional(),
  sweepRates: positiveInt,
  arrival,
  burstiness: z.number().positive().optional(),
  maxConcurrency: positiveInt.optional(),
  inputLens: z.array(positiveInt).optional(),
  outputLens: z.array(positiveInt).optional(),
  gridLatencyLoad: z.union([
    z.strictObject({ kind: z.literal('synchronous'), requests: positiveInt }),
    z.strictObject({ kind: z.literal('rate'), rate: z.number().positive(), requests: positiveInt }),
  ]),
  capacity: capacity.optional(),
  repeat: positiveInt.optional(),
  /** Rows the profile plans (an adaptive profile may end earlier or, for capacity, add probes). */
  plannedRows: z.number().int().min(0),
});

/** When a row's window opens and closes, and how long the run waits around it. */
const windowRules = z.strictObject({
  maxRequests: positiveInt.optional(),
  maxSeconds: z.number().positive().optional(),
  warmupSeconds: z.number().min(0).optional(),
  drainSeconds: z.number().min(0),
  stallSeconds: z.number().positive(),
  idleWaitSeconds: z.number().min(0),
  steadyState: z.boolean().optional(),
});

const request = z.strictObject({
  stream: z.boolean(),
  forceLength: z.boolean(),
  extraBody: z.record(z.string(), z.unknown()).optional(),
  reasoningFormat: z.enum(['fields', 'think-tags']).optional(),
  /** Conversations: the header naming the conversation on every turn (`--session-header`). */
  sessionHeader: z.string().optional(),
  /** The response header naming the replica that served a request (`--replica-header`). */
  replicaHeader: z.string().optional(),
  timeouts: z.strictObject({
    connectMs: z.number().positive().optional(),
    firstByteMs: z.number().positive().optional(),
    idleMs: z.number().positive().optional(),
    totalMs: z.number().positive().optional(),
  }),
});

const distribution = z.strictObject({
  /** Load threads, resolved; absent (a plan resolved without its workload, e.g. by k8s): decided from workersAsked at the run. */
  workers: positiveInt.optional(),
  workersAsked: z.union([positiveInt, z.literal('auto')]),
  /** Connections the run opens to the target (the in-flight bound of open loops without --max-concurrency). */
  connections: positiveInt,
  /** This process's part of a sharded run; `shardCount` alone: every shard runs this plan with its own index. */
  shard: z.strictObject({ index: z.number().int().min(0), count: positiveInt }).optional(),
  shardCount: positiveInt.optional(),
  barrier: z.string().optional(),
  /** Epoch ms of the first row's start. */
  startAt: z.number().optional(),
});

const outputs = z.strictObject({
  formats: z.array(z.enum(['table', 'md', 'json', 'csv', 'html', 'png', 'svg'])),
  out: z.string().optional(),
  columns: z.array(z.string()).optional(),
  records: z.union([
    z.strictObject({ kind: z.literal('full') }),
    z.strictObject({ kind: z.literal('no-gaps') }),
    z.strictObject({ kind: z.literal('sample'), fraction: z.number() }),
    z.strictObject({ kind: z.literal('none') }),
  ]),
});

/** Recorded with the run, not sent: what the user said the server runs on. */
const metadata = z.strictObject({
  label: z.string().optional(),
  gpu: z.string().optional(),
  gpus: positiveInt.optional(),
  quant: z.string().optional(),
  engineVersion: z.string().optional(),
});

export const runPlanSchema = z.strictObject({
  planVersion: z.literal(PLAN_VERSION),
  tool: z.strictObject({ name: z.literal('inferbench'), version: z.string() }),
  target: z.strictObject({
    /** null: the built-in simulated engine, started in-process with `sim`. */
    url: z.string().nullable(),
    /** Several replicas (`--target URL,URL,…`): every URL in order (`url` is the first) and how requests are spread. */
    replicas: z.array(z.string()).min(2).optional(),
    balance: z.enum(['round-robin', 'least-inflight', 'session']).optional(),
    sim: simTarget.optional(),
    api: z.string(),
    model: z.string().optional(),
    resolved: resolvedServer.optional(),
  }),
  request,
  tokenizer,
  workload,
  load,
  window: windowRules,
  slo: slo.optional(),
  distribution,
  outputs,
  metadata,
});

export type RunPlan = z.infer<typeof runPlanSchema>;

/**
 * A plan file's text as a plan; anything else is one line naming the file and what is wrong (a config error:
 * exit 2). `shown` is the file as the user wrote it.
 */
export function parseRunPlan(text: string, shown: string): RunPlan {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw configError(`--plan ${shown}: not JSON`, 'give a file written by inferbench run --dry-run (or the plan field of a run folder\'s manifest.json)');
  }
  // A run folder's manifest carries its plan: accept the manifest itself.
  if (isObject(value) && isObject(value['plan']) && !('planVersion' in value)) value = value['plan'];
  if (!isObject(value) || !('planVersion' in value)) {
    throw configError(`--plan ${shown}: not an inferbench run plan (no planVersion)`, 'give a file written by inferbench run --dry-run');
  }
  if (value['planVersion'] !== PLAN_VERSION) {
    throw configError(
      `--plan ${shown}: plan version ${JSON.stringify(value['planVersion'])}, this inferbench reads version ${PLAN_VERSION}`,
      'resolve the plan again with this version: inferbench run --dry-run …',
    );
  }
  const parsed = runPlanSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join('.') : 'the plan';
    throw configError(`--plan ${shown}: ${where}: ${issue?.message ?? 'invalid'}`, 'resolve it again with inferbench run --dry-run');
  }
  return parsed.data;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
