/**
 * `run --plan FILE`: the saved plan decides what is sent; the command line may only say where the results go
 * and how they are shown (and, for the pods of `inferbench k8s`, which shard of the plan this process is).
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { resolveRunOptions, type RunOptions } from '../config/run-options.js';
import { configError } from '../core/errors.js';
import { parseShard } from '../load/shard.js';
import { planRunOptions } from '../runplan/resolve.js';
import { parseRunPlan, type RunPlan } from '../runplan/schema.js';
import { withSources } from './flag-sources.js';

/** Flags a plan run takes (commander's attribute names): outputs, the key, the dashboard, the shard index. */
const WITH_PLAN = new Set(['plan', 'dryRun', 'out', 'format', 'columns', 'json', 'progress', 'records', 'label', 'ui', 'apiKey', 'shard']);

/** Profiles that pick each row from the rows before it: no shard sees them whole. */
const ADAPTIVE = new Set(['sweep', 'capacity']);

export function planRunInputs(flags: Record<string, unknown>, cmd: Command): { opts: RunOptions; plan: RunPlan } {
  const given = cmd.options.map((o) => o.attributeName()).filter((name) => cmd.getOptionValueSource(name) === 'cli');
  const shaping = given.filter((name) => !WITH_PLAN.has(name));
  if (shaping.length > 0) {
    const flag = cmd.options.find((o) => o.attributeName() === shaping[0])?.long ?? shaping[0];
    throw configError(`${flag} does not go with --plan: the plan fixes the load, the workload and the target`, 'with --plan give only --out, --format, --columns, --json, --records, --label, --no-progress, --api-key or --shard');
  }
  const file = flags['plan'] as string;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw configError(`--plan ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a folder, not a file' : (err as Error).message}`, 'give the file written by inferbench run --dry-run');
  }
  const plan = parseRunPlan(text, file);
  // The outputs as the plan run's own flags say (their defaults where not given); no load flag reaches here.
  const { plan: _p, dryRun: _d, ui: _u, shard: rawShard, ...outputFlags } = flags;
  const own = resolveRunOptions(withSources(outputFlags, cmd));
  const shard = rawShard === undefined ? undefined : parseShard(String(rawShard));
  if (rawShard !== undefined && !shard) throw configError(`--shard ${JSON.stringify(rawShard)} is not I/N with 0 ≤ I < N; write it like --shard 0/3 (the first of three)`);
  if (shard && ADAPTIVE.has(plan.load.profile)) throw configError(`--shard: the plan's --profile ${plan.load.profile} picks each row from the rows before it, which no shard sees whole`);
  const count = plan.distribution.shardCount;
  if (shard && count !== undefined && shard.count !== count) throw configError(`--shard ${shard.index}/${shard.count}: this plan is split into ${count} shards`, `pass --shard I/${count}`);
  const opts = planRunOptions(plan, {
    ...(own.out !== undefined ? { out: own.out } : {}),
    ...(given.includes('format') ? { formats: own.formats } : {}),
    ...(own.columns ? { columns: own.columns } : {}),
    json: own.json,
    progress: own.progress,
    ...(given.includes('records') ? { records: own.records } : {}),
    ...(own.label !== undefined ? { label: own.label } : {}),
    ...(own.apiKey !== undefined ? { apiKey: own.apiKey } : {}),
    ...(shard ? { shard } : {}),
  });
  if (opts.shard && opts.records.kind !== 'full') throw configError("--shard needs --records full: merge recomputes every figure from every shard's requests");
  return { opts, plan };
}
