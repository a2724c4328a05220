import { existsSync, statSync } from 'node:fs';
import { configError } from '../core/errors.js';
import { rowCountText } from '../report/row-status.js';
import { renderMarkdown } from '../report/table.js';
import { seriesLabel } from '../report/series.js';
import { findEngineProfile } from '../sim/engine/profiles.js';
import { DEFAULT_RESULTS_DIR, listRuns, matchesFilter, type RunFilter, type StoredRun } from '../store/run-store.js';

export interface LsFlags {
  results?: string;
  model?: string;
  engine?: string;
  gpu?: string;
  label?: string;
  since?: string;
  json?: boolean;
}

type Io = { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream };

function parseSince(raw: string | undefined): Date | undefined {
  if (raw === undefined) return undefined;
  const t = Date.parse(raw);
  if (!Number.isFinite(t)) throw configError(`--since ${JSON.stringify(raw)} is not a date`, 'use YYYY-MM-DD or an ISO time such as 2026-11-22T07:00');
  return new Date(t);
}

/** Where a run's figures come from: predicted (virtual time), imported (another tool), or measured. */
export function runSource(run: StoredRun): string {
  const source = run.manifest?.source;
  if (source) return `imported (${source.tool})`;
  return run.summary.context.predicted ? 'predicted' : 'measured';
}

/**
 * The engine by the name users type (`--engine vllm`), whether the run was measured or predicted: predicted runs
 * record the simulator's profile id (vllm-v1), measured ones the detected engine (vllm). Simulated engines say so.
 */
export function engineName(run: StoredRun): string {
  const { context, target } = run.summary;
  const recorded = target.engine && target.engine !== 'unknown' ? target.engine : context.engine;
  let name = recorded && recorded !== 'unknown' ? recorded : '—';
  if (target.simulated) {
    try {
      name = findEngineProfile(name).name;
    } catch {
      // an engine the simulator does not know: keep what was recorded
    }
  }
  return `${name}${context.engineVersion ? ` ${context.engineVersion}` : ''}${target.simulated ? ' (simulated)' : ''}`;
}

/** The rows of the run's table, and those with nothing to show by why (report/row-status.ts, shared with the dashboard). */
function rowsCell(run: StoredRun): string {
  return rowCountText(run.summary.stages, { layout: run.summary.layout, interrupted: run.summary.interrupted });
}

const when = (iso: string): string => (iso ? iso.replace('T', ' ').slice(0, 16) : '?');

/** `inferbench ls`: the saved runs under the results directory, newest last. */
export function lsCommand(flags: LsFlags, io: Io): number {
  const root = flags.results ?? DEFAULT_RESULTS_DIR;
  const since = parseSince(flags.since);
  const filter: RunFilter = {
    ...(flags.model !== undefined ? { model: flags.model } : {}),
    ...(flags.engine !== undefined ? { engine: flags.engine } : {}),
    ...(flags.gpu !== undefined ? { gpu: flags.gpu } : {}),
    ...(flags.label !== undefined ? { label: flags.label } : {}),
    ...(since ? { since } : {}),
  };
  // A folder the user named that is not there is a mistake (as `ui` says); the default folder just has no runs yet.
  if (flags.results !== undefined && !existsSync(root)) {
    throw configError(`no results folder at ${root}`, 'pass the folder your runs were saved in (--results DIR), or start a run first');
  }
  if (flags.results !== undefined && !statSync(root).isDirectory()) throw configError(`--results ${root} is a file, not a folder`, 'pass the folder that holds the run folders');
  const all = listRuns(root);
  const broken = all.filter((r) => r.error !== undefined);
  for (const b of broken) io.stderr.write(`warning: skipped ${b.name} (${b.id}): ${b.error}\n`);
  const runs = all.flatMap((r) => (r.run && matchesFilter(r.run, filter) ? [r.run] : []));
  if (flags.json) {
    const out = runs.map((r) => ({
      id: r.id,
      name: r.name,
      dir: r.dir,
      createdAt: r.summary.createdAt,
      layout: r.summary.layout,
      profile: r.summary.profile || r.summary.layout,
      engine: engineName(r),
      kind: runSource(r).replace(/ \(.*$/, ''),
      series: seriesLabel(r),
      rows: r.summary.stages.length,
      context: r.summary.context,
      ...(r.manifest?.source ? { source: r.manifest.source } : {}),
    }));
    io.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return 0;
  }
  if (runs.length === 0) {
    const filtered = Object.keys(filter).length > 0 && all.length > broken.length;
    io.stderr.write(filtered ? `no run in ${root} matches the filters (${all.length - broken.length} runs in all)\n` : `no runs in ${root} (save one with \`inferbench run\`, or point --results at another folder)\n`);
    return 0;
  }
  const rows = runs.map((r) => {
    const c = r.summary.context;
    return [
      r.id,
      when(r.summary.createdAt || (r.manifest?.createdAt ?? '')),
      r.summary.profile || r.summary.layout,
      c.model,
      engineName(r),
      c.gpu ? `${c.gpus ?? 1}× ${c.gpu}` : '—',
      c.quant ?? '—',
      rowsCell(r),
      runSource(r),
      c.label ?? '',
      r.name,
    ];
  });
  io.stdout.write(`${renderMarkdown({ headers: ['ID', 'Created (UTC)', 'Profile', 'Model', 'Engine', 'GPU', 'Quant', 'Rows', 'Source', 'Label', 'Folder'], rows })}\n`);
  io.stderr.write(`${runs.length} run${runs.length === 1 ? '' : 's'} in ${root}; pass an ID or a folder to \`inferbench report\` or \`inferbench compare\`\n`);
  return 0;
}
