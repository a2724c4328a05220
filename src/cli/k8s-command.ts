/**
 * `inferbench k8s --pods N --image IMAGE [k8s flags] -- [run flags]`: prints the Kubernetes manifest of one run
 * split into N shards (src/k8s/): the run flags resolved once into a plan, in a ConfigMap every pod runs. It only
 * prints: nothing is applied, nothing is sent.
 */
import { configError } from '../core/errors.js';
import { buildShardManifests } from '../k8s/manifest.js';
import { resolveK8sOptions, type RawK8sFlags } from '../k8s/options.js';
import { renderManifests } from '../k8s/render.js';
import { checkRunArgs, shardPlan, type RunArgsParser } from '../k8s/run-args.js';
import { parseRunFlags } from './run-args-parse.js';
import { toolVersion } from './version.js';

interface Out {
  write(text: string): unknown;
}

/** Returns the exit code; user mistakes throw a config error (one line, exit 2). */
export function k8sCommand(runArgs: readonly string[], flags: RawK8sFlags, io: { stdout: Out; stderr: Out }, now: Date = new Date()): number {
  const { spec, format } = resolveK8sOptions(flags, now);
  const run = checkRunArgs(runArgs, spec, parseRunArgs);
  const full = { ...spec, plan: `${JSON.stringify(shardPlan(run.opts, spec, toolVersion()), null, 2)}\n` };
  const rendered = renderManifests(full, buildShardManifests(full), format, { target: run.target });
  for (const n of run.notices) io.stderr.write(`note: ${n}\n`);
  if (run.target === undefined) io.stderr.write(`note: no --target: each of the ${spec.pods} pods measures its own built-in simulated engine\n`);
  if (format === 'json') for (const line of rendered.steps) io.stderr.write(`${line}\n`);
  io.stdout.write(rendered.manifest);
  return 0;
}

/** Parses with run's own flags and resolves with run's own rules; no environment: the pods have their own. */
const parseRunArgs: RunArgsParser = (args, notices) => parseRunFlags(args, { env: {}, notices });
