/**
 * The `run` flags each shard gets, checked here with run's own parser and option rules, so a mistake is one
 * line now rather than N failed pods later. They pass to the pods verbatim; the flags the manifest sets itself
 * (--out, --shard, --start-at) and the ones that cannot work in a pod are refused.
 */
import { Command, CommanderError } from 'commander';
import { configError } from '../core/errors.js';
import { profileFlags, runFlags, withFlags } from '../cli/run-flags.js';
import { withSources } from '../cli/main.js';
import { resolveRunOptions, type RunOptions } from '../config/run-options.js';

/** Profiles that split over shards: a fixed schedule every shard can derive its part of. */
export const SHARDABLE_PROFILES = ['constant', 'poisson', 'concurrent', 'throughput', 'grid', 'replay', 'synchronous'] as const;

/** Run flags the manifest refuses, and why. */
const REFUSED: Record<string, string> = {
  '--out': 'the manifest gives each shard its own --out (/results/<name>/shard-I); leave --out out',
  '--shard': 'the manifest gives each pod its --shard I/N; leave it out',
  '--start-at': '--start-at is a k8s flag: put it before the run flags (before --)',
  '--ui': '--ui serves a dashboard on 127.0.0.1 inside the pod, which nothing can reach; leave it out',
  '--resume': 'a sharded run cannot resume one folder; leave --resume out',
  '--api-key': '--api-key would be written into the manifest in clear; keep the key in a Secret and pass --api-key-secret NAME[:KEY] before the run flags',
};

/** Flags of `k8s` itself that `run` does not have: after the run flags they are a misplaced k8s flag. */
const K8S_ONLY = ['--pods', '--image', '--name', '--namespace', '--pvc', '--keep-seconds', '--cpu', '--memory', '--start-delay', '--api-key-secret'];

export interface CheckedRunArgs {
  args: string[];
  profile: string;
  /** Undefined: each pod measures the built-in simulated engine it starts itself. */
  target: string | undefined;
  /** Settings run implies from the flags (`--rate without --profile: …`), for `note:` lines. */
  notices: string[];
}

/** `shard`: what the manifest adds to every pod's flags, so run's own rules for shards are checked here too. */
export function checkRunArgs(args: readonly string[], shard: { pods: number; startAt: string }): CheckedRunArgs {
  for (const arg of args) {
    const flag = arg.split('=')[0] as string;
    const why = REFUSED[flag];
    if (why !== undefined) throw configError(`run flag ${flag}: ${why}`);
    if (K8S_ONLY.includes(flag)) throw configError(`${flag} is a k8s flag, not a run flag: put it before the run flags (before --)`);
  }
  const notices: string[] = [];
  const { opts, cmd } = resolveRun(args, notices);
  if (!(SHARDABLE_PROFILES as readonly string[]).includes(opts.profile)) {
    const implied = cmd.getOptionValueSource('profile') === 'cli' ? '' : " (run's default)";
    throw configError(
      `--profile ${opts.profile}${implied} cannot be split across shards: each shard would search on its own; pick a fixed profile: ${SHARDABLE_PROFILES.join(', ')}`,
    );
  }
  if (opts.target !== undefined && isLoopback(opts.target)) {
    throw configError(`--target ${opts.target} is the pod itself inside Kubernetes; give an address the pods can reach, e.g. http://vllm.default.svc:8000`);
  }
  // Once more as a pod will run it: run's rules for shards (--records full, …) apply.
  resolveRun([...args, '--shard', `0/${shard.pods}`, '--start-at', shard.startAt], []);
  return { args: [...args], profile: opts.profile, target: opts.target, notices };
}

/** Parses with run's own flags and resolves with run's own rules; a mistake is one config error. */
function resolveRun(args: readonly string[], notices: string[]): { opts: RunOptions; cmd: Command } {
  const cmd = withFlags(new Command('run'), profileFlags(), runFlags())
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined })
    .action(() => undefined);
  try {
    cmd.parse([...args], { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    const what = err.code === 'commander.helpDisplayed' ? "for run's flags see inferbench run --help" : err.message.replace(/^error: /, '');
    throw configError(`run flags: ${what}`);
  }
  // No environment: the pods have their own, and the local one (OPENAI_API_KEY, …) must not leak into the check.
  return { opts: resolveRunOptions(withSources(cmd.opts(), cmd), {}, undefined, notices), cmd };
}

function isLoopback(target: string): boolean {
  const host = new URL(target).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || host === '0.0.0.0' || /^127\./.test(host);
}
