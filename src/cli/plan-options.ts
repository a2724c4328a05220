import type { SearchInput } from '../plan/search.js';
/** `inferbench plan`'s flags → the search's settings. Every problem is reported at once, one line, exit 2. */
import { availableParallelism } from 'node:os';
import { resolveCapacitySettings } from '../config/capacity-options.js';
import { listItems, parseChoice, parseDuration, parseNumber, parseNumberList, parseSlo, type Problems } from '../config/parse.js';
import { configError } from '../core/errors.js';
import { parseKvCacheDtypeFlag } from '../config/kv-cache-dtype.js';
import type { StageLimits } from '../load/types.js';
import type { Calibration } from '../sim/calibrate/types.js';
import { findModel } from '../sim/catalog/registry.js';
import { PLAN_FORMATS, type PlanFormat } from '../plan/outputs.js';
import { hasPrice, loadPriceFile, parsePriceList, resolvePrices } from '../plan/prices.js';
import { resolveAxes } from '../plan/space.js';
import { describeLength, maxLength, parseLengthDist, parseScenario, type LengthDist } from '../workload/lengths.js';
import { createLengthsWorkload } from '../workload/synthetic.js';
import { parseIntervalLevel } from './calibration-flags.js';
import type { RouterSettings } from '../plan/routers.js';
import { DEFAULT_PD_RATIOS, type PdSettings } from '../plan/pd-splits.js';
import { parsePdSplit } from '../sim/cluster/pd.js';
import { ROUTER_POLICIES, type RouterPolicy } from '../sim/cluster/router.js';

export interface PlanFlags {
  model?: string;
  catalog?: string[];
  rate?: string;
  outputTokensPerS?: string;
  promptTokens?: string;
  outputTokens?: string;
  promptDist?: string;
  outputDist?: string;
  scenario?: string;
  prefixTokens?: string;
  prefixGroups?: string;
  /** `--router LIST`: routers to compare on the cheapest candidates (default: all three with shared prefixes). */
  router?: string;
  routerCandidates?: string;
  /** `--pd LIST|none`: prefill/decode split ratios tried on the cheapest candidates whose engine disaggregates. */
  pd?: string;
  pdCandidates?: string;
  slo?: string;
  sloAttainment?: string;
  maxErrorShare?: string;
  capacityPrecision?: string;
  capacityRepeats?: string;
  arrival?: string;
  maxSeconds?: string;
  warmup?: string;
  gpu?: string;
  tp?: string;
  quant?: string;
  kvCacheDtype?: string;
  engine?: string;
  gpuHourPrice?: string;
  prices?: string;
  calibration?: string;
  calibrateFrom?: string;
  saveCalibration?: string;
  intervalLevel?: string;
  exhaustive?: boolean;
  objective?: string;
  threads?: string;
  top?: string;
  all?: boolean;
  out?: string;
  format?: string;
  seed?: string;
  json?: boolean;
  /** `--verify N`: launch and measure the top N candidates (plan-verify.ts). */
  verify?: string;
  serverCmd?: string;
  readyTimeout?: string;
  stopTimeout?: string;
  /** Whether the user typed a flag (commander fills defaults). */
  explicit?: (name: string) => boolean;
}

export interface PlanOptions extends SearchInput {
  meanOutputTokens: number;
  workloadDescription: string;
  workloadFlags: string;
  /** How `predict` gets the same constants (`--calibration FILE`), or what to do to get them. */
  calibrationFlag?: string;
  verifyLimits: StageLimits;
  /** `--objective`: rank by cost (default) or by energy per output token. */
  objective: 'cost' | 'energy';
  top: number;
  all: boolean;
  out?: string;
  formats: PlanFormat[];
  json: boolean;
  /** Where --calibration or --calibrate-from come from, to fit or load once the rest is valid. */
  calibrationSource?: { kind: 'file' | 'run'; path: string };
  /** `--verify N`: what to launch and how to measure it (plan-verify.ts). */
  verify?: PlanVerifyOptions;
  /** `--router`, `--router-candidates`: routers compared on the cheapest candidates (absent: none). */
  routers?: RouterSettings;
  /** `--pd`, `--pd-candidates`: prefill/decode splits tried on the cheapest candidates (absent: none). */
  pd?: PdSettings;
}

/** Cheapest candidates whose routers are compared (--router-candidates): each costs a few clusters in virtual time. */
const ROUTER_CANDIDATES = 3;
/** Cheapest disaggregating candidates whose prefill/decode splits are tried (--pd-candidates). */
const PD_CANDIDATES = 3;

export interface PlanVerifyOptions {
  count: number;
  /** `--server-cmd`: a template, `launch` or `sim`. */
  serverCmd: string;
  readyTimeoutMs: number;
  stopTimeoutMs: number;
  /** `run`'s flags for the same capacity search as the plan's (its SLO, lengths, precision, probe length, seed). */
  runArgs: string[];
  precisionPct: number;
  saveCalibration?: string;
}

/** `--ready-timeout` default: engines that load large models take minutes. */
const READY_TIMEOUT = '15m';
const STOP_TIMEOUT = '30s';

/** The verification row is this many times a search probe's measured length, and at least VERIFY_MIN_SECONDS. */
const VERIFY_FACTOR = 4;
const VERIFY_MIN_SECONDS = 30;
/** Samples of the workload averaged for its mean output length. */
const MEAN_SAMPLES = 10_000;

/** A comma list flag's items; an empty item (`H100,,L40S`) is a problem (parse.ts listItems). */
const list = (flag: string, s: string | undefined, p: Problems): string[] | undefined => (s === undefined ? undefined : listItems(flag, s, p));

/** A distribution's typical largest request: its bound, or its mean when the tail is unbounded (as sim-limits reads it). */
function representative(d: LengthDist): number {
  const max = maxLength(d);
  if (Number.isFinite(max)) return max;
  return d.kind === 'normal' || d.kind === 'exponential' ? Math.round(d.mean) : max;
}

/** `--scenario 'N(512,64)/(128,16)'` survives a shell; plain numbers need no quotes. */
const shellWord = (s: string): string => (/^[\w.,:/-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The verification command's calibration: the file the constants are in, when there is one. */
function calibrationFlag(flags: PlanFlags): { calibrationFlag?: string } {
  // --save-calibration names the constants only with --calibrate-from (with --verify alone it is written after the plan).
  const file = flags.calibration ?? (flags.calibrateFrom ? flags.saveCalibration : undefined);
  if (file) return { calibrationFlag: `--calibration ${shellWord(file)}` };
  if (flags.calibrateFrom) return { calibrationFlag: '--calibration FILE  # the constants fitted on the run: plan --save-calibration FILE writes them' };
  return {};
}

export function resolvePlanOptions(flags: PlanFlags, calibration?: Calibration): PlanOptions {
  const p: Problems = [];
  if (!flags.model) p.push('plan needs --model, e.g. --model Qwen2-72B-Instruct (a catalog name, or one added with --catalog FILE)');
  const rate = parseNumber('--rate', flags.rate, p, { positive: true });
  const tokensPerS = parseNumber('--output-tokens-per-s', flags.outputTokensPerS, p, { positive: true });
  if (flags.rate === undefined && flags.outputTokensPerS === undefined) p.push('plan needs the load to serve: --rate R (requests per second) or --output-tokens-per-s T');
  if (flags.rate !== undefined && flags.outputTokensPerS !== undefined) p.push('--rate and --output-tokens-per-s both set the load; give one of them');
  const promptTokens = parseNumber('--prompt-tokens', flags.promptTokens ?? '512', p, { integer: true, positive: true }) ?? 512;
  const outputTokens = parseNumber('--output-tokens', flags.outputTokens ?? '128', p, { integer: true, positive: true }) ?? 128;
  if (flags.scenario && (flags.promptDist || flags.outputDist)) p.push('--scenario sets both lengths; drop --prompt-dist/--output-dist');
  const slo = parseSlo(flags.slo, p);
  const arrival = parseChoice('--arrival', flags.arrival ?? 'constant', ['constant', 'poisson'] as const, p) ?? 'constant';
  const capacity = resolveCapacitySettings(flags, { profile: 'capacity', slo, arrival }, p, { command: 'plan' });
  const maxSeconds = parseDuration('--max-seconds', flags.maxSeconds ?? '5', p, { positive: true }) ?? 5;
  const warmup = parseDuration('--warmup', flags.warmup, p, { min: 0 });
  const tp = parseNumberList('--tp', flags.tp, p, { integer: true, positive: true });
  const kvCacheDtype = parseKvCacheDtypeFlag(flags.kvCacheDtype, p);
  const threads = parseNumber('--threads', flags.threads, p, { integer: true, positive: true }) ?? availableParallelism();
  const top = parseNumber('--top', flags.top ?? '10', p, { integer: true, positive: true }) ?? 10;
  const seed = parseNumber('--seed', flags.seed ?? '42', p, { integer: true, min: 0 }) ?? 42;
  const formats = (list('--format', flags.format, p) ?? [...PLAN_FORMATS]).map((f) => parseChoice('--format', f, PLAN_FORMATS, p)).filter((f): f is PlanFormat => f !== undefined);
  if (flags.calibration && flags.calibrateFrom) p.push('--calibration and --calibrate-from both give the simulator its constants; give one of them');
  if (flags.saveCalibration && !flags.calibrateFrom && flags.verify === undefined) p.push('--save-calibration writes what --calibrate-from RUN fitted or what --verify N measured; add --calibrate-from RUN (a measured run folder) or --verify N --server-cmd …');
  const verify = readVerifyFlags(flags, p);
  const prefix = readPrefixFlags(flags, p);
  const routers = readRouterFlags(flags, prefix !== undefined, p);
  const pd = readPdFlags(flags, p);
  // The search axes' lists are read here too, so an empty item among them is one of the problems reported.
  const axisLists = { gpus: list('--gpu', flags.gpu, p), quants: list('--quant', flags.quant, p), engines: list('--engine', flags.engine, p) };
  if (p.length > 0) throw configError(p.length === 1 ? (p[0] as string) : `${p.length} problems: ${p.join('; ')}`, 'see inferbench plan --help');

  // Lengths: parsed here so that a bad distribution is one line naming its flag.
  const dists = flags.scenario
    ? parseScenario(flags.scenario)
    : {
        prompt: flags.promptDist ? parseLengthDist(flags.promptDist, '--prompt-dist') : ({ kind: 'fixed', value: promptTokens } as LengthDist),
        output: flags.outputDist ? parseLengthDist(flags.outputDist, '--output-dist') : ({ kind: 'fixed', value: outputTokens } as LengthDist),
      };
  const workload = createLengthsWorkload(dists.prompt, dists.output, seed);
  let sum = 0;
  for (let i = 0; i < MEAN_SAMPLES; i++) sum += workload.item(i).outputTokens;
  const meanOutputTokens = dists.output.kind === 'fixed' ? dists.output.value : sum / MEAN_SAMPLES;
  const model = findModel(flags.model as string).name;
  const axes = resolveAxes(flags.model as string, {
    ...(flags.gpu ? { gpus: axisLists.gpus ?? [] } : {}),
    ...(tp ? { tp } : {}),
    ...(flags.quant ? { quants: axisLists.quants ?? [] } : {}),
    ...(flags.engine ? { engines: axisLists.engines ?? [] } : {}),
  });
  const given = {
    ...(flags.prices ? { file: loadPriceFile(flags.prices) } : {}),
    ...(flags.gpuHourPrice ? { flag: parsePriceList(flags.gpuHourPrice) } : {}),
  };
  // Without --gpu, the search covers the catalog GPUs that have a price (yours or the built-in assumption): a plan
  // ranks by cost. The rest are named once, with the flag that adds them.
  const unpriced = flags.gpu ? [] : axes.gpus.filter((g) => !hasPrice(g, given));
  if (unpriced.length > 0) axes.gpus = axes.gpus.filter((g) => hasPrice(g, given));
  const prices = resolvePrices(axes.gpus, given);
  if (unpriced.length > 0) prices.unpriced = unpriced;
  const limits: StageLimits = { maxSeconds, ...(warmup !== undefined ? { warmupSeconds: warmup } : {}) };
  const workloadFlags = flags.scenario
    ? `--scenario ${shellWord(flags.scenario)}`
    : [
        flags.promptDist ? `--prompt-dist ${shellWord(flags.promptDist)}` : `--prompt-tokens ${promptTokens}`,
        flags.outputDist ? `--output-dist ${shellWord(flags.outputDist)}` : `--output-tokens ${outputTokens}`,
      ].join(' ');
  return {
    job: {
      model,
      workload: { prompt: dists.prompt, output: dists.output, seed, ...(prefix ? { prefix } : {}) },
      capacity: capacity as NonNullable<typeof capacity>,
      limits,
      seed,
      rate: rate ?? (tokensPerS as number) / meanOutputTokens,
      meanOutputTokens,
      catalogFiles: flags.catalog ?? [],
      ...(calibration ? { calibration } : {}),
      ...(kvCacheDtype ? { kvCacheDtype } : {}),
      intervalLevel: parseIntervalLevel(flags.intervalLevel),
    },
    axes,
    prices,
    threads,
    // Pruning bounds candidates by cost: ranking by energy searches every candidate.
    prune: flags.exhaustive !== true && flags.objective !== 'energy',
    objective: flags.objective === 'energy' ? 'energy' : 'cost',
    // A shared prefix makes a prompt at least the prefix, BOS and one token long (workload/synthetic.ts).
    longest: { promptTokens: Math.max(representative(dists.prompt), prefix ? prefix.tokens + 2 : 0), outputTokens: representative(dists.output), flags: flags.scenario ? '--scenario' : '--prompt-tokens/--output-tokens' },
    meanOutputTokens,
    workloadDescription: `${describeLength(dists.prompt)} prompt tokens, ${describeLength(dists.output)} output tokens${prefix ? `, ${prefix.groups} shared prefixes of ${prefix.tokens} tokens` : ''}`,
    workloadFlags: prefix ? `${workloadFlags} --prefix-tokens ${prefix.tokens} --prefix-groups ${prefix.groups}` : workloadFlags,
    ...(routers ? { routers } : {}),
    ...(pd ? { pd } : {}),
    ...calibrationFlag(flags),
    verifyLimits: { ...limits, maxSeconds: Math.max(VERIFY_MIN_SECONDS, VERIFY_FACTOR * maxSeconds) },
    top,
    all: flags.all === true,
    ...(flags.out ? { out: flags.out } : {}),
    formats,
    json: flags.json === true,
    ...(flags.calibration ? { calibrationSource: { kind: 'file' as const, path: flags.calibration } } : {}),
    ...(flags.calibrateFrom ? { calibrationSource: { kind: 'run' as const, path: flags.calibrateFrom } } : {}),
    ...(verify ? { verify: { ...verify, runArgs: measureRunArgs(flags, seed, arrival), precisionPct: capacity ? +(capacity.precision * 100).toPrecision(12) : 5 } } : {}),
  };
}

/** `--prefix-tokens T [--prefix-groups G]`, as run and predict take them; undefined without --prefix-tokens. */
function readPrefixFlags(flags: PlanFlags, p: Problems): { tokens: number; groups: number } | undefined {
  const groupsTyped = flags.prefixGroups !== undefined && (flags.explicit?.('prefixGroups') ?? true);
  if (flags.prefixTokens === undefined) {
    if (groupsTyped) p.push('--prefix-groups needs --prefix-tokens, e.g. --prefix-tokens 256 --prefix-groups 4');
    return undefined;
  }
  const tokens = parseNumber('--prefix-tokens', String(flags.prefixTokens), p, { integer: true, positive: true });
  const groups = parseNumber('--prefix-groups', String(flags.prefixGroups ?? '1'), p, { integer: true, positive: true });
  return tokens !== undefined && groups !== undefined ? { tokens, groups } : undefined;
}

/**
 * `--router LIST` (round-robin, least-load, prefix-aware; `none`: no comparison) and `--router-candidates N`. Without
 * --router, a shared-prefix workload compares all three (where routing matters) and any other workload none.
 */
function readRouterFlags(flags: PlanFlags, sharesPrefixes: boolean, p: Problems): RouterSettings | undefined {
  const candidates = parseNumber('--router-candidates', flags.routerCandidates ?? String(ROUTER_CANDIDATES), p, { integer: true, min: 0 }) ?? ROUTER_CANDIDATES;
  const items = flags.router === undefined ? undefined : listItems('--router', flags.router, p);
  if (items && items.length === 1 && items[0] === 'none') return undefined;
  const routers = items
    ? [...new Set(items.map((r) => parseChoice('--router', r, ROUTER_POLICIES, p)).filter((r): r is RouterPolicy => r !== undefined))]
    : sharesPrefixes ? [...ROUTER_POLICIES] : [];
  if (flags.routerCandidates !== undefined && routers.length === 0 && p.length === 0) p.push('--router-candidates goes with routers to compare: --router round-robin,prefix-aware, or a shared-prefix workload (--prefix-tokens)');
  return routers.length > 0 && candidates > 0 ? { routers, candidates } : undefined;
}

/**
 * `--pd LIST` (split ratios P:D, e.g. 1:1,1:3; `none`: no comparison) and `--pd-candidates N`. Without --pd, the
 * default ratios (1:1, 1:2, 1:3, 2:1) are tried on the cheapest candidates whose engine disaggregates.
 */
function readPdFlags(flags: PlanFlags, p: Problems): PdSettings | undefined {
  const candidates = parseNumber('--pd-candidates', flags.pdCandidates ?? String(PD_CANDIDATES), p, { integer: true, min: 0 }) ?? PD_CANDIDATES;
  const items = flags.pd === undefined ? undefined : listItems('--pd', flags.pd, p);
  if (items && items.length === 1 && items[0] === 'none') {
    if (flags.pdCandidates !== undefined) p.push('--pd-candidates goes with splits to try: drop --pd none, or give --pd 1:1,1:3');
    return undefined;
  }
  const ratios: PdSettings['ratios'][number][] = [];
  for (const item of items ?? []) {
    try {
      const r = parsePdSplit(item);
      if (!ratios.some((q) => q.prefill === r.prefill && q.decode === r.decode)) ratios.push(r);
    } catch (err) {
      p.push((err as Error).message);
    }
  }
  const list = items ? ratios : [...DEFAULT_PD_RATIOS];
  return list.length > 0 && candidates > 0 ? { ratios: list, candidates } : undefined;
}

/** --verify, --server-cmd, --ready-timeout, --stop-timeout: each problem pushed; undefined without --verify. */
function readVerifyFlags(flags: PlanFlags, p: Problems): Omit<PlanVerifyOptions, 'runArgs' | 'precisionPct'> | undefined {
  const given = (name: keyof PlanFlags): boolean => flags[name] !== undefined && (flags.explicit?.(name) ?? true);
  if (flags.verify === undefined) {
    for (const [key, flag] of [['serverCmd', '--server-cmd'], ['readyTimeout', '--ready-timeout'], ['stopTimeout', '--stop-timeout']] as const) {
      if (given(key)) p.push(`${flag} goes with --verify N (launch and measure the top N candidates)`);
    }
    return undefined;
  }
  const count = parseNumber('--verify', flags.verify, p, { integer: true, positive: true });
  if (flags.serverCmd === undefined || flags.serverCmd.trim() === '') p.push('--verify needs --server-cmd: sim (inferbench sim as each candidate, runs anywhere), launch (the launch commands the plan prints, on a machine with those GPUs) or a template such as \'vllm serve {checkpoint} --tensor-parallel-size {gpus} --port {port}\'');
  const readyS = parseDuration('--ready-timeout', flags.readyTimeout ?? READY_TIMEOUT, p, { positive: true });
  const stopS = parseDuration('--stop-timeout', flags.stopTimeout ?? STOP_TIMEOUT, p, { positive: true });
  if (count === undefined || readyS === undefined || stopS === undefined || !flags.serverCmd) return undefined;
  return { count, serverCmd: flags.serverCmd, readyTimeoutMs: readyS * 1000, stopTimeoutMs: stopS * 1000, ...(flags.saveCalibration ? { saveCalibration: flags.saveCalibration } : {}) };
}

/** `run`'s flags for the plan's own capacity search: the SLO and its judgement, the lengths, probe length and seed. */
function measureRunArgs(flags: PlanFlags, seed: number, arrival: string): string[] {
  const args: string[] = ['--slo', flags.slo as string, '--arrival', arrival, '--max-seconds', flags.maxSeconds ?? '5', '--seed', String(seed)];
  const pass: Array<[keyof PlanFlags, string]> = [
    ['sloAttainment', '--slo-attainment'], ['maxErrorShare', '--max-error-share'], ['capacityPrecision', '--capacity-precision'], ['capacityRepeats', '--capacity-repeats'], ['warmup', '--warmup'],
    ['scenario', '--scenario'], ['promptDist', '--prompt-dist'], ['outputDist', '--output-dist'], ['prefixTokens', '--prefix-tokens'],
  ];
  for (const [key, flag] of pass) if (typeof flags[key] === 'string') args.push(flag, flags[key] as string);
  if (!flags.scenario && !flags.promptDist) args.push('--prompt-tokens', flags.promptTokens ?? '512');
  if (!flags.scenario && !flags.outputDist) args.push('--output-tokens', flags.outputTokens ?? '128');
  if (flags.prefixTokens !== undefined) args.push('--prefix-groups', String(flags.prefixGroups ?? '1'));
  return args;
}
