import { configError } from '../core/errors.js';
import type { ApiName } from '../dialects/types.js';
import { PROFILE_NAMES, type GridLatencyLoad, type ProfileName } from '../load/profiles.js';
import type { ArrivalKind } from '../load/types.js';
import { parseShard, type ShardSpec } from '../load/shard.js';
import type { Slo } from '../metrics/summary.js';
import type { CapacitySettings } from '../load/capacity-types.js';
import { resolveCapacitySettings } from './capacity-options.js';
import { resolveEmbeddingOptions } from './embedding-options.js';
import { resolveImageOptions } from './image-options.js';
import type { Timeouts } from '../transport/exchange.js';
import type { ImageSpec } from '../workload/images.js';
import { parseRecordPolicy, type RecordPolicy } from '../store/record-policy.js';
import { explicitFlags, reconcileProfileFlags, stripV1Suffix } from './flag-conflicts.js';
import { parseKvCacheDtypeFlag } from './kv-cache-dtype.js';
import { listItems, parseChoice, parseDuration, parseGridLatencyLoad, parseJsonObject, parseNumber, parseNumberList, parseRateList, parseSlo, type Problems } from './parse.js';

export const API_CHOICES = [
  'auto',
  'openai-chat',
  'openai-completions',
  'vllm',
  'tgi',
  'sglang',
  'lmdeploy',
  'llamacpp',
  'triton',
  'ollama',
  'openai-embeddings',
  'tei-embeddings',
] as const;
export const FORMAT_CHOICES = ['table', 'md', 'json', 'csv', 'html', 'png', 'svg'] as const;
export type ReportFormat = (typeof FORMAT_CHOICES)[number];

/** Raw flag values as commander hands them over (strings; booleans for switches). */
export interface RawRunFlags {
  images?: string;
  imageSize?: string;
  batchSize?: string;
  reasoningFormat?: string;
  repeat?: string;
  steadyState?: boolean;
  workers?: string;
  shard?: string;
  barrier?: string;
  startAt?: string;
  target?: string;
  api?: string;
  model?: string;
  profile?: string;
  rate?: string;
  concurrency?: string;
  promptTokens?: string;
  outputTokens?: string;
  maxRequests?: string;
  maxSeconds?: string;
  warmup?: string;
  inputLens?: string;
  outputLens?: string;
  numPrompts?: string;
  sweepRates?: string;
  arrival?: string;
  burstiness?: string;
  maxConcurrency?: string;
  gpu?: string;
  gpus?: string;
  engine?: string;
  engineVersion?: string;
  quant?: string;
  kvCacheDtype?: string;
  label?: string;
  out?: string;
  format?: string;
  json?: boolean;
  slo?: string;
  seed?: string;
  apiKey?: string;
  extraBody?: string;
  stream?: boolean;
  forceLength?: boolean;
  timeoutConnect?: string;
  timeoutFirstByte?: string;
  timeoutIdle?: string;
  timeoutRequest?: string;
  drain?: string;
  stallTimeout?: string;
  progress?: boolean;
  resume?: string;
  records?: string;
  /** False when --output-tokens holds commander's default rather than the user's value. */
  outputTokensExplicit?: boolean;
  numPromptsExplicit?: boolean;
  /** False when these hold commander's defaults (see flag-conflicts.ts). Undefined: given when set. */
  profileExplicit?: boolean;
  arrivalExplicit?: boolean;
  sweepRatesExplicit?: boolean;
  tokenizer?: string;
  promptDist?: string;
  outputDist?: string;
  scenario?: string;
  data?: string;
  dataColumn?: string;
  prefixTokens?: string;
  prefixGroups?: string;
  turns?: string;
  thinkTime?: string;
  trace?: string;
  timeScale?: string;
  gridLatencyLoad?: string;
  idleWait?: string;
  sloAttainment?: string;
  maxErrorShare?: string;
  capacityAxis?: string;
  capacityPrecision?: string;
  capacityRepeats?: string;
  columns?: string;
}

export interface RunOptions {
  /** Undefined: start the simulated engine in-process and benchmark it. */
  target?: string;
  api: ApiName | 'auto';
  model?: string;
  profile: ProfileName;
  rates?: number[];
  concurrencies?: number[];
  promptTokens: number;
  outputTokens: number;
  maxRequests?: number;
  maxSeconds?: number;
  warmupSeconds?: number;
  inputLens?: number[];
  outputLens?: number[];
  numPrompts: number;
  /** --num-prompts was given (with --data it samples the file). */
  numPromptsGiven: boolean;
  sweepRates: number;
  arrival: ArrivalKind;
  burstiness?: number;
  maxConcurrency?: number;
  gpu?: string;
  gpus?: number;
  engine?: string;
  engineVersion?: string;
  quant?: string;
  /** `--kv-cache-dtype`: the built-in simulator's KV-cache element type (auto | fp8 | int8); undefined: the model's. */
  kvCacheDtype?: string;
  label?: string;
  out?: string;
  formats: ReportFormat[];
  json: boolean;
  slo?: Slo;
  seed: number;
  apiKey?: string;
  extraBody?: Record<string, unknown>;
  stream: boolean;
  forceLength: boolean;
  timeouts: Partial<Timeouts>;
  drainSeconds: number;
  /** `--stall-timeout`: a row stops once requests are open and none has completed for this long (or 10× the synchronous latency). */
  stallSeconds: number;
  progress: boolean;
  /** Continue the run in this folder from its first unfinished row. */
  resume?: string;
  /** What goes to requests.jsonl (summaries always use every request). */
  records: RecordPolicy;
  workload: WorkloadOptions;
  /** Grid cells: how the latency columns are measured (`--grid-latency-load synchronous|rate:R`). */
  gridLatencyLoad: GridLatencyLoad;
  /** Before each row, wait at most this long for the server to be idle (`--idle-wait`). */
  idleWaitSeconds: number;
  /** `--profile capacity`: the search's settings (--slo, --slo-attainment, --capacity-*). */
  capacity?: CapacitySettings;
  /** `--columns`: the terminal table's columns (report/columns.ts); undefined = the compact default. */
  columns?: string[];
  /** `--reasoning-format think-tags`: reasoning is inline `<think>…</think>` (metrics/reasoning.ts); default: the engine's fields. */
  reasoningFormat?: 'fields' | 'think-tags';
  /** `--steady-state`: rows also report the stretch of steady in-flight count (metrics/steady-state.ts). */
  steadyState?: boolean;
  /** `--repeat N`: every row runs N times (metrics/repeats.ts). */
  repeat?: number;
  /** Embeddings APIs: inputs per request (`--batch-size`, default 1); absent for generation APIs. */
  batchSize?: number;
  /** `--workers`: load worker threads (1 = this thread sends), or `auto`. */
  workers: number | 'auto';
  /** `--shard I/N`: this process runs part I of N of the run. */
  shard?: ShardSpec;
  /** `--barrier DIR`: shards meet in this shared folder before every row, so rows start together. */
  barrier?: string;
  /** `--start-at`: the first row starts at this instant (epoch ms). */
  startAt?: number;
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

/** `--workers`: a positive integer or `auto`. */
function parseWorkers(raw: string | undefined, p: Problems): number | 'auto' {
  if (raw === undefined) return 1;
  if (raw.trim() === 'auto') return 'auto';
  const n = parseNumber('--workers', raw, p, { integer: true, positive: true });
  if (n !== undefined && n > 64) {
    p.push(`--workers ${n} is more threads than any host here needs; use at most one per core (or auto)`);
    return 1;
  }
  return n ?? 1;
}

/**
 * Seconds each row is measured for when nothing else bounds it, after its ramp-up (load/window.ts). `run` and
 * `predict` use the same rules, so a prediction and a measurement of one setup compare like with like.
 */
export const DEFAULT_STAGE_SECONDS = 5;
/** `--drain`'s default: measured requests may take this long to finish after their row's window closed. */
export const DEFAULT_DRAIN_SECONDS = 30;
/** `--stall-timeout`'s default: a row with requests open and none finished this long stops (a silent server). */
export const DEFAULT_STALL_SECONDS = 30;

/**
 * Validate every flag at once; throws one E_CONFIG error listing all problems. `notices` receives one line per
 * setting implied from the flags (e.g. `--rate` alone runs the constant profile), for the CLI to print.
 */
export function resolveRunOptions(
  raw: RawRunFlags,
  env: NodeJS.ProcessEnv = process.env,
  defaults: { stageSeconds: number } = { stageSeconds: DEFAULT_STAGE_SECONDS },
  notices: string[] = [],
): RunOptions {
  const p: Problems = [];
  let profile = parseChoice('--profile', raw.profile ?? 'sweep', PROFILE_NAMES, p) ?? 'sweep';
  const api = parseChoice('--api', raw.api ?? 'auto', API_CHOICES, p) ?? 'auto';
  let target = raw.target;
  if (target !== undefined) {
    try {
      const u = new URL(target);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
      target = stripV1Suffix(u, notices);
    } catch {
      p.push(`--target ${JSON.stringify(raw.target)} is not an http(s) URL; write it like --target http://127.0.0.1:8000`);
    }
  }
  const opts: RunOptions = {
    api,
    profile,
    promptTokens: parseNumber('--prompt-tokens', raw.promptTokens, p, { integer: true, positive: true }) ?? 512,
    outputTokens: parseNumber('--output-tokens', raw.outputTokens, p, { integer: true, positive: true }) ?? 128,
    numPrompts: parseNumber('--num-prompts', raw.numPrompts, p, { integer: true, positive: true }) ?? 100,
    numPromptsGiven: raw.numPromptsExplicit === true,
    sweepRates: parseNumber('--sweep-rates', raw.sweepRates, p, { integer: true, positive: true }) ?? 9,
    arrival: parseChoice('--arrival', raw.arrival ?? 'constant', ['constant', 'poisson', 'gamma'] as const, p) ?? 'constant',
    formats: (listItems('--format', raw.format ?? 'table,md,json,csv', p) ?? [])
      .map((f) => parseChoice('--format', f, FORMAT_CHOICES, p))
      .filter((f): f is ReportFormat => f !== undefined),
    json: raw.json === true,
    seed: parseNumber('--seed', raw.seed, p, { integer: true, min: 0 }) ?? 42,
    stream: raw.stream !== false,
    forceLength: raw.forceLength !== false,
    timeouts: {},
    drainSeconds: parseDuration('--drain', raw.drain, p, { min: 0 }) ?? DEFAULT_DRAIN_SECONDS,
    stallSeconds: parseDuration('--stall-timeout', raw.stallTimeout, p, { positive: true }) ?? DEFAULT_STALL_SECONDS,
    progress: raw.progress !== false,
    records: { kind: 'full' },
    gridLatencyLoad: parseGridLatencyLoad(raw.gridLatencyLoad, p),
    idleWaitSeconds: parseDuration('--idle-wait', raw.idleWait, p, { min: 0 }) ?? 60,
    workload: { outputTokensGiven: raw.outputTokens !== undefined && raw.outputTokensExplicit !== false },
    workers: parseWorkers(raw.workers, p),

  };
  const w = opts.workload;
  const setW = <K extends keyof WorkloadOptions>(key: K, value: WorkloadOptions[K] | undefined): void => {
    if (value !== undefined) w[key] = value;
  };
  setW('tokenizer', raw.tokenizer);
  setW('promptDist', raw.promptDist);
  setW('outputDist', raw.outputDist);
  setW('scenario', raw.scenario);
  setW('data', raw.data);
  setW('dataColumn', raw.dataColumn);
  setW('prefixTokens', parseNumber('--prefix-tokens', raw.prefixTokens, p, { integer: true, positive: true }));
  setW('prefixGroups', parseNumber('--prefix-groups', raw.prefixGroups, p, { integer: true, positive: true }));
  setW('turns', raw.turns);
  setW('thinkTime', raw.thinkTime);
  setW('trace', raw.trace);
  setW('timeScale', parseNumber('--time-scale', raw.timeScale, p, { positive: true }));
  const sources = [w.data && '--data', w.trace && '--trace', w.turns && '--turns', w.scenario && '--scenario'].filter(Boolean);
  if (sources.length > 1) p.push(`${sources.join(' and ')} each describe the whole workload; give one of them`);
  if (w.scenario && (w.promptDist || w.outputDist)) p.push('--scenario sets both lengths; drop --prompt-dist/--output-dist');
  if ((w.prefixGroups !== undefined) !== (w.prefixTokens !== undefined) && w.prefixGroups !== undefined) {
    p.push('--prefix-groups needs --prefix-tokens, e.g. --prefix-tokens 256 --prefix-groups 4');
  }
  if (w.thinkTime && !w.turns) p.push('--think-time goes with --turns');
  if (w.timeScale !== undefined && !w.trace) p.push('--time-scale goes with --trace (to slow the simulated engine down, use inferbench sim --model-time-scale)');
  const set = <K extends keyof RunOptions>(key: K, value: RunOptions[K] | undefined): void => {
    if (value !== undefined) opts[key] = value;
  };
  set('target', target);
  set('model', raw.model);
  set('rates', parseRateList('--rate', raw.rate, p));
  set('concurrencies', parseNumberList('--concurrency', raw.concurrency, p, { integer: true, positive: true }));
  set('maxRequests', parseNumber('--max-requests', raw.maxRequests, p, { integer: true, positive: true }));
  set('maxSeconds', parseDuration('--max-seconds', raw.maxSeconds, p, { positive: true }));
  set('warmupSeconds', parseDuration('--warmup', raw.warmup, p, { min: 0 }));
  set('inputLens', parseNumberList('--input-lens', raw.inputLens, p, { integer: true, positive: true }));
  set('outputLens', parseNumberList('--output-lens', raw.outputLens, p, { integer: true, positive: true }));
  set('burstiness', parseNumber('--burstiness', raw.burstiness, p, { positive: true }));
  set('maxConcurrency', parseNumber('--max-concurrency', raw.maxConcurrency, p, { integer: true, positive: true }));
  set('gpu', raw.gpu);
  set('gpus', parseNumber('--gpus', raw.gpus, p, { integer: true, positive: true }));
  set('engine', raw.engine);
  set('engineVersion', raw.engineVersion);
  set('quant', raw.quant);
  set('kvCacheDtype', parseKvCacheDtypeFlag(raw.kvCacheDtype, p));
  if (target !== undefined && raw.kvCacheDtype !== undefined) {
    p.push("--kv-cache-dtype sets the built-in simulator's KV cache, but --target measures your server as it is; drop it (predict --calibrate-from RUN --kv-cache-dtype T models a server that uses it)");
  }
  set('label', raw.label);
  set('out', raw.out);
  set('resume', raw.resume);
  if (raw.records !== undefined) {
    try {
      opts.records = parseRecordPolicy(raw.records);
    } catch (err) {
      p.push((err as Error).message + ' — use full, no-gaps, sample:FRACTION or none');
    }
  }
  set('slo', parseSlo(raw.slo, p));
  if (raw.steadyState === true) opts.steadyState = true;
  const reasoningFormat = parseChoice('--reasoning-format', raw.reasoningFormat, ['fields', 'think-tags'] as const, p);
  if (reasoningFormat === 'think-tags') opts.reasoningFormat = reasoningFormat;
  const repeat = parseNumber('--repeat', raw.repeat, p, { integer: true, positive: true });
  if (repeat !== undefined && repeat > 1) {
    if (profile === 'capacity') p.push('--repeat does not go with --profile capacity: the search repeats the probes near the boundary itself (--capacity-repeats)');
    else if (raw.shard !== undefined) p.push('--repeat does not go with --shard: merge joins one run of each row; run the sharded command N times instead');
    else opts.repeat = repeat;
  }
  if (raw.shard !== undefined) {
    const shard = parseShard(raw.shard);
    if (shard) opts.shard = shard;
    else p.push(`--shard ${JSON.stringify(raw.shard)} is not I/N with 0 ≤ I < N; write it like --shard 0/3 (the first of three)`);
  }
  if (raw.barrier !== undefined) {
    if (raw.shard === undefined) p.push('--barrier goes with --shard I/N (shards meet there before every row)');
    else opts.barrier = raw.barrier;
  }
  if (raw.startAt !== undefined) {
    // ISO-8601 with a date and a time; a bare date or a number is a mistake, not midnight or epoch ms.
    const at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(raw.startAt) ? Date.parse(raw.startAt) : NaN;
    if (Number.isNaN(at)) p.push(`--start-at ${JSON.stringify(raw.startAt)} is not an ISO-8601 instant; write it like --start-at 2026-11-24T10:00:00Z`);
    else opts.startAt = at;
  }
  // Names are checked against the report's column catalog by the command (report/columns.ts parseColumns).
  if (raw.columns !== undefined) opts.columns = listItems('--columns', raw.columns, p) ?? [];
  set('apiKey', raw.apiKey ?? (env['OPENAI_API_KEY'] || undefined));
  set('extraBody', parseJsonObject('--extra-body', raw.extraBody, p));
  const t = (flag: string, v: string | undefined): number | undefined => {
    const s = parseDuration(flag, v, p, { positive: true });
    return s === undefined ? undefined : s * 1000;
  };
  const timeouts: Partial<Timeouts> = {};
  const connect = t('--timeout-connect', raw.timeoutConnect);
  const firstByte = t('--timeout-first-byte', raw.timeoutFirstByte);
  const idle = t('--timeout-idle', raw.timeoutIdle);
  const total = t('--timeout-request', raw.timeoutRequest);
  if (connect !== undefined) timeouts.connectMs = connect;
  if (firstByte !== undefined) timeouts.firstByteMs = firstByte;
  if (idle !== undefined) timeouts.idleMs = idle;
  if (total !== undefined) timeouts.totalMs = total;
  opts.timeouts = timeouts;

  const capacity = resolveCapacitySettings(raw, { profile, slo: opts.slo, arrival: opts.arrival }, p);
  if (capacity) opts.capacity = capacity;
  ({ profile, arrival: opts.arrival } = reconcileProfileFlags({ ...opts, profile, trace: w.trace }, explicitFlags(raw), p, notices));
  opts.profile = profile;
  resolveEmbeddingOptions(raw, opts, p);
  resolveImageOptions(raw, opts, p);
  if (opts.capacity) {
    opts.capacity.arrival = opts.arrival;
    if (opts.burstiness !== undefined) opts.capacity.burstiness = opts.burstiness;
  }

  // A flag given but malformed is already a problem: "needs --rate" after it would only repeat it.
  if ((profile === 'constant' || profile === 'poisson') && raw.rate === undefined) {
    p.push(`--profile ${profile} needs --rate, e.g. --rate 1,2,4 (requests per second)`);
  }
  if (profile === 'concurrent' && raw.concurrency === undefined) p.push('--profile concurrent needs --concurrency, e.g. --concurrency 1,8,32');
  if (profile === 'grid' && (raw.inputLens === undefined || raw.outputLens === undefined)) {
    p.push('--profile grid needs --input-lens and --output-lens, e.g. --input-lens 128,512 --output-lens 128,512');
  }
  if (profile !== 'grid' && (opts.inputLens || opts.outputLens)) {
    p.push('--input-lens/--output-lens belong to --profile grid; use --prompt-tokens/--output-tokens for other profiles');
  }
  if (opts.shard && (profile === 'sweep' || profile === 'capacity')) {
    p.push(`--profile ${profile} picks each row from the rows before it, which no shard sees whole: run it on one host (--workers N), or run fixed rows over shards (e.g. --profile constant --rate 10,20,40)`);
  }
  if (opts.shard && opts.maxConcurrency !== undefined && opts.maxConcurrency < opts.shard.count) {
    p.push(`--max-concurrency ${opts.maxConcurrency} is fewer slots than the ${opts.shard.count} shards: each shard needs one; lower the shard count or raise the cap`);
  }
  if (opts.shard && opts.records.kind !== 'full') p.push('--shard needs --records full: merge recomputes every figure from every shard\'s requests');
  if (opts.shard && opts.resume !== undefined) p.push('--resume cannot continue a shard (the other shards would not resume with it); rerun every shard');
  if (p.length > 0) {
    throw configError(p.length === 1 ? (p[0] as string) : `${p.length} problems: ${p.join('; ')}`, 'see inferbench run --help');
  }
  if (opts.profile !== 'grid' && opts.profile !== 'replay' && opts.maxRequests === undefined && opts.maxSeconds === undefined) {
    opts.maxSeconds = defaults.stageSeconds;
  }
  return opts;
}
