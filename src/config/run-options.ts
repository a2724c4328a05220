/**
 * `run`'s (and `predict`'s) options: resolved from the raw flags section by section (./sections.ts, each flag read
 * through its row of the flag table, ./flags/), then checked across sections here. Nothing here changes its input:
 * every resolver returns values.
 */
import { configError } from '../core/errors.js';
import { resolveCapacitySettings } from './capacity-options.js';
import { resolveEmbeddingOptions } from './embedding-options.js';
import { reconcileProfileFlags } from './flag-conflicts.js';
import { FlagReader, type RawRunFlags } from './flags/table.js';
import { DEFAULT_STAGE_SECONDS } from './flags/window.js';
import { resolveImageOptions } from './image-options.js';
import { defined, flattenSections, type RunOptionSections, type RunOptions } from './options.js';
import type { Problems } from './parse.js';
import {
  resolveDistributionSection,
  resolveLoadSection,
  resolveOutputSection,
  resolveTargetSection,
  resolveWindowSection,
  resolveWorkloadSection,
} from './sections.js';

export { API_CHOICES } from './flags/target.js';
export { FORMAT_CHOICES, type ReportFormat } from './flags/outputs.js';
export type { RawRunFlags } from './flags/table.js';
export { DEFAULT_DRAIN_SECONDS, DEFAULT_STAGE_SECONDS, DEFAULT_STALL_SECONDS } from './flags/window.js';
export type { RunOptions, RunOptionSections, WorkloadOptions } from './options.js';

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
  return flattenSections(resolveRunSections(raw, env, defaults, notices));
}

/** The same resolution, the options grouped by section (what the run plan records). */
export function resolveRunSections(
  raw: RawRunFlags,
  env: NodeJS.ProcessEnv = process.env,
  defaults: { stageSeconds: number } = { stageSeconds: DEFAULT_STAGE_SECONDS },
  notices: string[] = [],
): RunOptionSections {
  const p: Problems = [];
  const f = new FlagReader(raw, p);
  const s: RunOptionSections = {
    target: resolveTargetSection(f, env, notices),
    workload: resolveWorkloadSection(f),
    load: resolveLoadSection(f),
    window: resolveWindowSection(f),
    outputs: resolveOutputSection(f),
    distribution: resolveDistributionSection(f),
  };
  const resolved = across(f, s, notices);
  if (p.length > 0) {
    throw configError(p.length === 1 ? (p[0] as string) : `${p.length} problems: ${p.join('; ')}`, 'see inferbench run --help');
  }
  const { profile } = resolved.load;
  const { maxRequests, maxSeconds } = resolved.window;
  if (profile !== 'grid' && profile !== 'replay' && maxRequests === undefined && maxSeconds === undefined) {
    return { ...resolved, window: { ...resolved.window, maxSeconds: defaults.stageSeconds } };
  }
  return resolved;
}

/** The checks across sections, and what one section implies for another; returns new sections. */
function across(f: FlagReader, s: RunOptionSections, notices: string[]): RunOptionSections {
  const p = f.problems;
  const { load, workload, target, window, outputs, distribution } = s;
  const repeat = f.given('repeat');
  let repeatKept: number | undefined;
  if (repeat !== undefined && repeat > 1) {
    if (load.profile === 'capacity') p.push('--repeat does not go with --profile capacity: the search repeats the probes near the boundary itself (--capacity-repeats)');
    else if (f.has('shard')) p.push('--repeat does not go with --shard: merge joins one run of each row; run the sharded command N times instead');
    else repeatKept = repeat;
  }
  const capacity = resolveCapacitySettings(f.raw, { profile: load.profile, slo: load.slo, arrival: load.arrival }, p);
  const flat = flattenSections(s);
  const { profile, arrival } = reconcileProfileFlags(
    { ...flat, trace: workload.workload.trace },
    { profile: f.explicit('profile'), arrival: f.explicit('arrival'), sweepRates: f.explicit('sweepRates') },
    p,
    notices,
  );
  const embeddings = resolveEmbeddingOptions(f.raw, { ...flat, profile }, p);
  const images = resolveImageOptions(f.raw, flat, p);

  // A flag given but malformed is already a problem: "needs --rate" after it would only repeat it.
  if ((profile === 'constant' || profile === 'poisson') && !f.has('rate')) p.push(`--profile ${profile} needs --rate, e.g. --rate 1,2,4 (requests per second)`);
  if (profile === 'concurrent' && !f.has('concurrency')) p.push('--profile concurrent needs --concurrency, e.g. --concurrency 1,8,32');
  if (profile === 'grid' && (!f.has('inputLens') || !f.has('outputLens'))) {
    p.push('--profile grid needs --input-lens and --output-lens, e.g. --input-lens 128,512 --output-lens 128,512');
  }
  if (profile !== 'grid' && (load.inputLens || load.outputLens)) {
    p.push('--input-lens/--output-lens belong to --profile grid; use --prompt-tokens/--output-tokens for other profiles');
  }
  const { shard } = distribution;
  if (shard && (profile === 'sweep' || profile === 'capacity')) {
    p.push(`--profile ${profile} picks each row from the rows before it, which no shard sees whole: run it on one host (--workers N), or run fixed rows over shards (e.g. --profile constant --rate 10,20,40)`);
  }
  if (shard && load.maxConcurrency !== undefined && load.maxConcurrency < shard.count) {
    p.push(`--max-concurrency ${load.maxConcurrency} is fewer slots than the ${shard.count} shards: each shard needs one; lower the shard count or raise the cap`);
  }
  if (shard && outputs.records.kind !== 'full') p.push("--shard needs --records full: merge recomputes every figure from every shard's requests");
  if (shard && outputs.resume !== undefined) p.push('--resume cannot continue a shard (the other shards would not resume with it); rerun every shard');

  return {
    target: embeddings ? { ...target, batchSize: embeddings.batchSize, stream: embeddings.stream, forceLength: embeddings.forceLength } : target,
    workload: {
      ...workload,
      ...(embeddings ? { outputTokens: embeddings.outputTokens } : {}),
      workload: images ? { ...workload.workload, images } : workload.workload,
    },
    load: defined({
      ...load,
      profile,
      arrival,
      capacity: capacity && defined({ ...capacity, arrival, burstiness: load.burstiness }),
    }),
    window: defined({ ...window, repeat: repeatKept }),
    outputs,
    distribution,
  };
}
