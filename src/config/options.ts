/**
 * A run's resolved options, in sections (issue 30, item 3): each flag of the table (config/flags/) fills one.
 * RunOptions is their intersection, so every field keeps its name; RunOptionSections is the same values grouped,
 * as the run plan records them.
 */
import type { PowerSourceSpec } from '../power/source-spec.js';
import type { ApiName } from '../dialects/types.js';
import type { CapacitySettings } from '../load/capacity-types.js';
import type { GridLatencyLoad, ProfileName } from '../load/profiles.js';
import type { ShardSpec } from '../load/shard.js';
import type { ArrivalKind } from '../load/types.js';
import type { Slo } from '../metrics/summary.js';
import type { RecordPolicy } from '../store/record-policy.js';
import type { Timeouts } from '../transport/exchange.js';
import type { ImageSpec } from '../workload/images.js';
import type { ReportFormat } from './flags/outputs.js';

/** The server and how requests are sent to it; for the built-in simulator, what it models. */
export interface TargetSection {
  /** Undefined: start the simulated engine in-process and benchmark it. */
  target?: string;
  /** Several replicas (`--target URL,URL,…`): every URL in order, the first being `target`; absent for one. */
  targets?: string[];
  /** How requests are spread over `targets` (default round-robin). */
  balance?: 'round-robin' | 'least-inflight' | 'session';
  /** Conversations: the header that names the conversation on every turn (as typed; the run's default is X-Session-ID). */
  sessionHeader?: string;
  /** The response header that names the replica that served each request (a router's). */
  replicaHeader?: string;
  api: ApiName | 'auto';
  model?: string;
  apiKey?: string;
  extraBody?: Record<string, unknown>;
  stream: boolean;
  forceLength: boolean;
  /** `--reasoning-format think-tags`: reasoning is inline `<think>…</think>` (metrics/reasoning.ts); default: the engine's fields. */
  reasoningFormat?: 'fields' | 'think-tags';
  /** Embeddings APIs: inputs per request (`--batch-size`, default 1); absent for generation APIs. */
  batchSize?: number;
  timeouts: Partial<Timeouts>;
  gpu?: string;
  gpus?: number;
  engine?: string;
  engineVersion?: string;
  quant?: string;
  /** `--kv-cache-dtype`: the built-in simulator's KV-cache element type (auto | fp8 | int8); undefined: the model's. */
  kvCacheDtype?: string;
  /** `--power`: where the GPUs' power is read (power/source-spec.ts); undefined: auto. */
  power?: PowerSourceSpec;
  /** `--power-gpus`: the GPUs whose power counts; undefined: every GPU the source reports. */
  powerGpus?: number[];
}

/** What the requests hold. */
export interface WorkloadSection {
  promptTokens: number;
  outputTokens: number;
  seed: number;
  workload: WorkloadOptions;
}

/** How prompts are made (issue: workloads). Length strings are parsed by workload/lengths. */
export interface WorkloadOptions {
  /** A tokenizer.json path, `server`, or undefined for the approximate default. */
  tokenizer?: string;
  promptDist?: string;
  outputDist?: string;
  scenario?: string;
  data?: string;
  dataColumn?: string;
  /** --output-tokens was given (with --data it overrides the file's lengths). */
  outputTokensGiven: boolean;
  prefixTokens?: number;
  prefixGroups?: number;
  turns?: string;
  thinkTime?: string;
  trace?: string;
  timeScale?: number;
  /** `--images N --image-size WxH`: synthetic images on every chat request. */
  images?: ImageSpec;
}

/** The profile and its rows. */
export interface LoadSection {
  profile: ProfileName;
  rates?: number[];
  concurrencies?: number[];
  sweepRates: number;
  arrival: ArrivalKind;
  burstiness?: number;
  maxConcurrency?: number;
  inputLens?: number[];
  outputLens?: number[];
  numPrompts: number;
  /** --num-prompts was given (with --data it samples the file). */
  numPromptsGiven: boolean;
  /** Grid cells: how the latency columns are measured (`--grid-latency-load synchronous|rate:R`). */
  gridLatencyLoad: GridLatencyLoad;
  slo?: Slo;
  /** `--profile capacity`: the search's settings (--slo, --slo-attainment, --capacity-*). */
  capacity?: CapacitySettings;
}

/** How long and how each row is measured, and how long it may run on. */
export interface WindowSection {
  maxRequests?: number;
  maxSeconds?: number;
  warmupSeconds?: number;
  /** `--steady-state`: rows also report the stretch of steady in-flight count (metrics/steady-state.ts). */
  steadyState?: boolean;
  /** `--repeat N`: every row runs N times (metrics/repeats.ts). */
  repeat?: number;
  drainSeconds: number;
  /** `--stall-timeout`: a row stops once requests are open and none has completed nor received bytes for this long (or 10× the synchronous latency). */
  stallSeconds: number;
  /** Before each row, wait at most this long for the server to be idle (`--idle-wait`). */
  idleWaitSeconds: number;
}

/** What is printed and written. */
export interface OutputSection {
  formats: ReportFormat[];
  json: boolean;
  /** `--columns`: the terminal table's columns (report/columns.ts); undefined = the compact default. */
  columns?: string[];
  out?: string;
  /** What goes to requests.jsonl (summaries always use every request). */
  records: RecordPolicy;
  progress: boolean;
  /** Continue the run in this folder from its first unfinished row. */
  resume?: string;
  label?: string;
}

/** Worker threads, shards over hosts, and when they start. */
export interface DistributionSection {
  /** `--workers`: load worker threads (1 = this thread sends), or `auto`. */
  workers: number | 'auto';
  /** `--shard I/N`: this process runs part I of N of the run. */
  shard?: ShardSpec;
  /** `--barrier DIR`: shards meet in this shared folder before every row, so rows start together. */
  barrier?: string;
  /** `--start-at`: the first row starts at this instant (epoch ms). */
  startAt?: number;
}

export type RunOptions = TargetSection & WorkloadSection & LoadSection & WindowSection & OutputSection & DistributionSection;

/** The resolved options grouped by section (what the run plan records). */
export interface RunOptionSections {
  target: TargetSection;
  workload: WorkloadSection;
  load: LoadSection;
  window: WindowSection;
  outputs: OutputSection;
  distribution: DistributionSection;
}

/** One bag of the sections (a field is in exactly one section). */
export function flattenSections(s: RunOptionSections): RunOptions {
  return { ...s.target, ...s.workload, ...s.load, ...s.window, ...s.outputs, ...s.distribution };
}

/** The object without its undefined fields (an optional option is absent, never present as undefined). */
export function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
