/**
 * From options to a plan and back. `resolveRunPlan` is a pure function of the options and of what the probes
 * found (it never changes `opts`); `planRunOptions` gives the options a plan stands for, which the executor and
 * the reports read, so a saved plan rebuilds the same profile (buildProfileConfig) and the same prompts.
 */
import type { RunOptions } from '../config/run-options.js';
import { OPEN_LOOP_MAX_IN_FLIGHT, plannedStageCount } from '../load/profiles.js';
import type { Workload } from '../workload/types.js';
import { buildProfileConfig } from './profile-config.js';
import { PLAN_VERSION, type RunPlan } from './schema.js';

/** What resolving found out besides the options: the server's answers, the tokenizer, the simulator started. */
export interface PlanProbes {
  toolVersion: string;
  /** The built-in simulated engine (run without --target, predict). */
  sim?: NonNullable<RunPlan['target']['sim']> & { description?: string };
  /** Detection's answer; absent when nothing was probed (k8s: every pod probes the server itself). */
  server?: NonNullable<RunPlan['target']['resolved']>;
  tokenizer?: NonNullable<RunPlan['tokenizer']['resolved']>;
  workloadDescription?: string;
  /** --workers auto, decided from the workload. */
  workers?: number;
}

/** Connections when nothing else bounds the requests in flight (open loops without --max-concurrency stop at this many). */
export const DEFAULT_POOL_CONNECTIONS = OPEN_LOOP_MAX_IN_FLIGHT;

/** The most requests the run can have in flight: the connection pool's size. */
export function connectionsFor(opts: RunOptions): number {
  return Math.max(
    opts.maxConcurrency ?? 0,
    ...(opts.concurrencies ?? [1]),
    opts.profile === 'grid' ? opts.numPrompts : 0,
    opts.maxConcurrency === undefined && opts.profile !== 'synchronous' && opts.profile !== 'concurrent' ? DEFAULT_POOL_CONNECTIONS : 0,
  );
}

export function resolveRunPlan(opts: RunOptions, probes: PlanProbes): RunPlan {
  const w = opts.workload;
  const server = probes.server;
  const { description, ...sim } = probes.sim ?? { description: undefined };
  return {
    planVersion: PLAN_VERSION,
    tool: { name: 'inferbench', version: probes.toolVersion },
    target: {
      url: opts.target ?? null,
      ...(opts.targets ? { replicas: [...opts.targets], balance: opts.balance ?? 'round-robin' } : {}),
      ...(probes.sim ? { sim: sim as NonNullable<RunPlan['target']['sim']> } : {}),
      api: opts.api,
      ...(opts.model !== undefined ? { model: opts.model } : {}),
      ...(server ? { resolved: { ...server, ...(description !== undefined ? { simDescription: description } : {}) } } : {}),
    },
    request: {
      stream: opts.stream,
      forceLength: opts.forceLength,
      ...(opts.extraBody ? { extraBody: structuredClone(opts.extraBody) } : {}),
      ...(opts.reasoningFormat ? { reasoningFormat: opts.reasoningFormat } : {}),
      ...defined({ sessionHeader: opts.sessionHeader, replicaHeader: opts.replicaHeader }),
      timeouts: { ...opts.timeouts },
    },
    tokenizer: { ...(w.tokenizer !== undefined ? { requested: w.tokenizer } : {}), ...(probes.tokenizer ? { resolved: { ...probes.tokenizer } } : {}) },
    workload: {
      seed: opts.seed,
      promptTokens: opts.promptTokens,
      outputTokens: opts.outputTokens,
      numPrompts: opts.numPrompts,
      numPromptsGiven: opts.numPromptsGiven,
      outputTokensGiven: w.outputTokensGiven,
      ...defined({
        ...workloadSources(w),
        batchSize: opts.batchSize,
        description: probes.workloadDescription,
      }),
    },
    load: {
      profile: opts.profile,
      ...(opts.rates ? { rates: opts.rates.map((r) => (Number.isFinite(r) ? r : ('inf' as const))) } : {}),
      ...(opts.concurrencies ? { concurrencies: [...opts.concurrencies] } : {}),
      sweepRates: opts.sweepRates,
      arrival: opts.arrival,
      ...defined({
        burstiness: opts.burstiness,
        maxConcurrency: opts.maxConcurrency,
        inputLens: opts.inputLens ? [...opts.inputLens] : undefined,
        outputLens: opts.outputLens ? [...opts.outputLens] : undefined,
        capacity: opts.capacity ? { ...opts.capacity, slo: { ...opts.capacity.slo } } : undefined,
        repeat: opts.repeat,
      }),
      gridLatencyLoad: { ...opts.gridLatencyLoad },
      plannedRows: plannedRows(opts),
    },
    window: {
      ...defined({ maxRequests: opts.maxRequests, maxSeconds: opts.maxSeconds, warmupSeconds: opts.warmupSeconds }),
      drainSeconds: opts.drainSeconds,
      stallSeconds: opts.stallSeconds,
      idleWaitSeconds: opts.idleWaitSeconds,
      ...(opts.steadyState ? { steadyState: true } : {}),
    },
    ...(opts.slo ? { slo: { ...opts.slo } } : {}),
    distribution: {
      ...(opts.workers !== 'auto' ? { workers: opts.workers } : probes.workers !== undefined ? { workers: probes.workers } : {}),
      workersAsked: opts.workers,
      connections: connectionsFor(opts),
      ...(opts.shard ? { shard: { ...opts.shard } } : {}),
      ...defined({ barrier: opts.barrier, startAt: opts.startAt }),
    },
    outputs: {
      formats: [...opts.formats],
      ...defined({ out: opts.out, columns: opts.columns ? [...opts.columns] : undefined }),
      records: { ...opts.records },
    },
    metadata: defined({ label: opts.label, gpu: opts.gpu, gpus: opts.gpus, quant: opts.quant, engineVersion: opts.engineVersion }),
  };
}

/** Outputs a plan run may choose for itself: where and how the results are written and shown. */
export interface PlanOverrides {
  out?: string;
  formats?: RunOptions['formats'];
  columns?: string[];
  json?: boolean;
  progress?: boolean;
  records?: RunOptions['records'];
  label?: string;
  apiKey?: string;
  /** k8s pods: which shard of the plan's shardCount this one is. */
  shard?: { index: number; count: number };
}

/** The options a plan stands for (the flags that would resolve to it), with the outputs the caller chose. */
export function planRunOptions(plan: RunPlan, over: PlanOverrides = {}): RunOptions {
  const { target, workload: w, load, window, distribution: d, request, outputs, metadata } = plan;
  const sim = target.url === null ? target.sim : undefined;
  const opts: RunOptions = {
    api: target.api as RunOptions['api'],
    profile: load.profile,
    promptTokens: w.promptTokens,
    outputTokens: w.outputTokens,
    numPrompts: w.numPrompts,
    numPromptsGiven: w.numPromptsGiven,
    sweepRates: load.sweepRates,
    arrival: load.arrival,
    formats: over.formats ?? [...outputs.formats],
    json: over.json ?? false,
    seed: w.seed,
    stream: request.stream,
    forceLength: request.forceLength,
    timeouts: { ...request.timeouts },
    drainSeconds: window.drainSeconds,
    stallSeconds: window.stallSeconds,
    progress: over.progress ?? true,
    records: over.records ?? { ...outputs.records },
    gridLatencyLoad: { ...load.gridLatencyLoad },
    idleWaitSeconds: window.idleWaitSeconds,
    workers: d.workers ?? d.workersAsked,
    workload: {
      outputTokensGiven: w.outputTokensGiven,
      ...defined({
        tokenizer: plan.tokenizer.requested,
        ...workloadSources(w),
      }),
    },
    ...defined({
      target: target.url ?? undefined,
      targets: target.replicas ? [...target.replicas] : undefined,
      balance: target.balance,
      sessionHeader: request.sessionHeader,
      replicaHeader: request.replicaHeader,
      model: target.model ?? sim?.model,
      engine: sim?.engine,
      kvCacheDtype: sim?.kvCacheDtype,
      rates: load.rates?.map((r) => (r === 'inf' ? Number.POSITIVE_INFINITY : r)),
      concurrencies: load.concurrencies ? [...load.concurrencies] : undefined,
      maxRequests: window.maxRequests,
      maxSeconds: window.maxSeconds,
      warmupSeconds: window.warmupSeconds,
      inputLens: load.inputLens ? [...load.inputLens] : undefined,
      outputLens: load.outputLens ? [...load.outputLens] : undefined,
      burstiness: load.burstiness,
      maxConcurrency: load.maxConcurrency,
      gpu: metadata.gpu ?? sim?.gpu,
      gpus: metadata.gpus ?? sim?.gpus,
      quant: metadata.quant ?? sim?.quant,
      engineVersion: metadata.engineVersion,
      label: over.label ?? metadata.label,
      out: over.out,
      slo: plan.slo ? { ...plan.slo } : undefined,
      apiKey: over.apiKey,
      extraBody: request.extraBody ? structuredClone(request.extraBody) : undefined,
      capacity: load.capacity ? { ...load.capacity, slo: { ...load.capacity.slo } } : undefined,
      columns: over.columns ?? (outputs.columns ? [...outputs.columns] : undefined),
      reasoningFormat: request.reasoningFormat,
      steadyState: window.steadyState,
      repeat: load.repeat,
      batchSize: w.batchSize,
      shard: over.shard ?? (d.shard ? { ...d.shard } : undefined),
      barrier: d.barrier,
      startAt: d.startAt,
    }),
  };
  return opts;
}

/**
 * The tokenizer a plan's run must use (as --tokenizer would say it): the one resolution settled on, so the prompts
 * come out the same (a server that has no /tokenize by now is an error, not a quiet fall back to approx).
 */
export function planTokenizer(plan: RunPlan): string | undefined {
  const t = plan.tokenizer.resolved;
  if (!t) return plan.tokenizer.requested;
  if (t.kind === 'server') return 'server';
  if (t.kind === 'file') return t.path;
  if (t.kind === 'approx') return 'approx';
  return undefined;
}

/** Rows the profile plans up front (the count reads the profile's settings only, never a workload). */
function plannedRows(opts: RunOptions): number {
  const none = {} as Workload;
  return plannedStageCount(buildProfileConfig(opts, () => none, none));
}

/** The object without its undefined entries (exactOptionalPropertyTypes: absent, not undefined). */
/** The workload's sources and length distributions: the same fields in the options and in the plan, copied. */
function workloadSources(w: RunOptions['workload'] | RunPlan['workload']) {
  return {
    promptDist: w.promptDist,
    outputDist: w.outputDist,
    scenario: w.scenario,
    data: w.data,
    dataColumn: w.dataColumn,
    prefixTokens: w.prefixTokens,
    prefixGroups: w.prefixGroups,
    turns: w.turns,
    thinkTime: w.thinkTime,
    trace: w.trace,
    timeScale: w.timeScale,
    images: w.images ? { ...w.images } : undefined,
  };
}

function defined<T extends Record<string, unknown>>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}
