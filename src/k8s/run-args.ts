/**
 * The `run` flags of a sharded run, checked with run's own parser and option rules (the caller's, `parse`), so a
 * mistake is one line now rather than N failed pods later; then resolved once into the plan every pod runs. The
 * flags the manifest sets itself (--out, --shard, --start-at) and the ones that cannot work in a pod are refused.
 */
import type { RunOptions } from '../config/run-options.js';
import { configError } from '../core/errors.js';
import { resolveRunPlan } from '../runplan/resolve.js';
import type { RunPlan } from '../runplan/schema.js';
import { barrierDir, type ShardJobSpec } from './manifest.js';

/** Profiles that split over shards: a fixed schedule every shard can derive its part of. */
export const SHARDABLE_PROFILES = ['constant', 'poisson', 'concurrent', 'throughput', 'grid', 'replay', 'synchronous'] as const;

/** Run flags the manifest refuses, and why. */
const REFUSED: Record<string, string> = {
  '--out': 'the manifest gives each shard its own --out (/results/<name>/shard-I); leave --out out',
  '--shard': 'the manifest gives each pod its --shard I/N; leave it out',
  '--start-at': '--start-at is a k8s flag: put it before the run flags (before --)',
  '--ui': '--ui serves a dashboard on 127.0.0.1 inside the pod, which nothing can reach; leave it out',
  '--resume': 'a sharded run cannot resume one folder; leave --resume out',
  '--plan': 'the manifest resolves these run flags into the plan every pod runs; give the run flags, not a plan',
  '--dry-run': 'the manifest holds the plan already (its ConfigMap); leave --dry-run out',
  '--api-key': '--api-key would be written into the manifest in clear; keep the key in a Secret and pass --api-key-secret NAME[:KEY] before the run flags',
};

/** Flags of `k8s` itself that `run` does not have: after the run flags they are a misplaced k8s flag. */
const K8S_ONLY = ['--pods', '--image', '--name', '--namespace', '--pvc', '--keep-seconds', '--cpu', '--memory', '--start-delay', '--api-key-secret'];

/** run's own flag parser and option rules: the options, and whether --profile was typed. A mistake throws one config error. */
export type RunArgsParser = (args: readonly string[], notices: string[]) => { opts: RunOptions; profileGiven: boolean };

export interface CheckedRunArgs {
  args: string[];
  opts: RunOptions;
  profile: string;
  /** Undefined: each pod measures the built-in simulated engine it starts itself. */
  target: string | undefined;
  /** Settings run implies from the flags (`--rate without --profile: …`), for `note:` lines. */
  notices: string[];
}

/** `shard`: what the manifest adds to every pod's flags, so run's own rules for shards are checked here too. */
export function checkRunArgs(args: readonly string[], shard: { pods: number; startAt: string }, parse: RunArgsParser): CheckedRunArgs {
  for (const arg of args) {
    const flag = arg.split('=')[0] as string;
    const why = REFUSED[flag];
    if (why !== undefined) throw configError(`run flag ${flag}: ${why}`);
    if (K8S_ONLY.includes(flag)) throw configError(`${flag} is a k8s flag, not a run flag: put it before the run flags (before --)`);
  }
  const notices: string[] = [];
  const { opts, profileGiven } = parse(args, notices);
  if (!(SHARDABLE_PROFILES as readonly string[]).includes(opts.profile)) {
    const implied = profileGiven ? '' : " (run's default)";
    throw configError(
      `--profile ${opts.profile}${implied} cannot be split across shards: each shard would search on its own; pick a fixed profile: ${SHARDABLE_PROFILES.join(', ')}`,
    );
  }
  if (opts.target !== undefined && isLoopback(opts.target)) {
    throw configError(`--target ${opts.target} is the pod itself inside Kubernetes; give an address the pods can reach, e.g. http://vllm.default.svc:8000`);
  }
  // Once more as a pod will run it: run's rules for shards (--records full, …) apply.
  parse([...args, '--shard', `0/${shard.pods}`, '--start-at', shard.startAt], []);
  return { args: [...args], opts, profile: opts.profile, target: opts.target, notices };
}

/**
 * The plan every pod runs: the run flags resolved here, once. The server is not probed (it is often reachable only
 * from inside the cluster): each pod asks it when its run starts. The plan carries the shard count, the start
 * instant and, with a shared claim, the barrier folder; each pod adds its own index (`run --plan … --shard I/N`).
 */
export function shardPlan(opts: RunOptions, spec: Omit<ShardJobSpec, 'plan'>, toolVersion: string): RunPlan {
  const plan = resolveRunPlan(opts, { toolVersion });
  return {
    ...plan,
    distribution: {
      ...plan.distribution,
      shardCount: spec.pods,
      startAt: Date.parse(spec.startAt),
      ...(spec.pvc !== undefined ? { barrier: barrierDir(spec) } : {}),
    },
  };
}

function isLoopback(target: string): boolean {
  const host = new URL(target).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || host === '0.0.0.0' || /^127\./.test(host);
}
