/**
 * The end of `inferbench run`: the summary document (written after every row and at the end), the tables and
 * files, the lines under the table, and the exit code.
 */
import { writeRunSummary } from '../store/run-folder.js';
import { join } from 'node:path';
import type { RunOptions } from '../config/run-options.js';
import type { ShardInfo } from '../distributed/shard-run.js';
import type { RunPower } from '../results/energy.js';
import type { BenchmarkResult } from '../load/benchmark.js';
import { healthLine, type ClientHealth } from '../metrics/health.js';
import type { StageSummary } from '../metrics/summary.js';
import { renderCsvReport, renderMarkdownReport, renderTerminalReport, type RunSummaryDoc } from '../report/run-summary.js';
import { terminalStyle } from '../report/terminal.js';
import { gridDescription, lengthContext } from '../runplan/profile-config.js';
import type { RunWriter } from '../store/run-writer.js';
import { isFsError } from '../store/write-errors.js';
import { capacityFailed, capacityField } from './capacity-answer.js';
import { diskFailureLine } from './disk-failure.js';
import type { ResolvedRun } from './run-resolve.js';
import { writeRunReportFiles } from './run-report-files.js';
import { datasetRepeats, noSuccessMessage } from './run-outcome.js';
import { toolVersion } from './version.js';
import { redactArgv } from '../ui/redact.js';
import { describeWindowRules, shortWindowRules } from './window-rules.js';
import { workloadSpecOf } from './workload-spec.js';
import { runNameOf } from '../store/nested-runs.js';

/** What every summary of one run shares; `shard` and `workers` are known once the load is about to start. */
export interface RunDocBase {
  opts: RunOptions;
  run: ResolvedRun;
  outDir: string;
  createdAt: Date;
  shard?: ShardInfo;
  workers: number;
  /** `--power`: what was asked for and what was read (summary.json `power`). */
  power?: RunPower;
}

/** The header fields of the run's table: what was measured, on what. */
export function runContext(opts: RunOptions, run: ResolvedRun): RunSummaryDoc['context'] {
  const { sim } = run;
  const server = run.plan.target.resolved;
  const engine = server?.engine ?? opts.api;
  const engineVersion = opts.engineVersion ?? server?.engineVersion;
  // The user's --gpu/--gpus/--quant win; else the built-in simulator's, in-process or an `inferbench sim` target's.
  const hw = server?.simHardware;
  const gpu = opts.gpu ?? sim?.gpu ?? hw?.gpu;
  const gpus = opts.gpus ?? sim?.gpus ?? (opts.gpu === undefined ? hw?.gpus : undefined);
  const quant = opts.quant ?? sim?.quant ?? hw?.quant;
  return {
    model: server?.model ?? '',
    engine: sim ? `${engine} (simulated)` : engine,
    // --engine-version wins; otherwise the version the server reported to detection is recorded.
    ...(engineVersion ? { engineVersion } : {}),
    ...(gpu ? { gpu } : {}),
    ...(gpus ? { gpus } : {}),
    ...(quant ? { quant } : {}),
    ...(sim?.kvCacheDtype ? { kvCacheDtype: sim.kvCacheDtype } : {}),
    ...(opts.label ? { label: opts.label } : {}),
    ...lengthContext(opts, run.prompts.workload.description),
  };
}

export function runSummaryDoc(b: RunDocBase, stages: StageSummary[], interrupted: boolean): RunSummaryDoc {
  const { opts, run } = b;
  const server = run.plan.target.resolved;
  const { dialect } = run;
  return {
    tool: { name: 'inferbench', version: toolVersion() },
    // A matrix cell's or verify candidate's run is named by its path from the matrix folder (every such folder is `run`).
    runId: runNameOf(b.outDir),
    createdAt: b.createdAt.toISOString(),
    finishedAt: new Date().toISOString(),
    layout: opts.profile === 'grid' ? 'grid' : 'sweep',
    context: runContext(opts, run),
    target: {
      ...(opts.target ? { url: opts.target } : {}),
      api: dialect.name,
      engine: server?.engine ?? opts.api,
      model: server?.model ?? '',
      simulated: run.sim !== undefined,
      ...(server?.detection !== undefined ? { detection: server.detection } : {}),
    },
    profile: opts.profile,
    workload: opts.profile === 'grid' ? gridDescription(opts) : run.prompts.workload.description,
    workloadSpec: workloadSpecOf(opts, { tokenizer: run.tokenizer.name, chat: dialect.name === 'openai-chat', forcedOutputLength: opts.forceLength && dialect.canForceLength }),
    windowRules: describeWindowRules(opts),
    ...(b.shard ? { shard: b.shard } : {}),
    ...(b.workers > 1 ? { workers: b.workers } : {}),
    ...(b.power ? { power: b.power } : {}),
    stages,
    ...capacityField(opts, stages, interrupted),
    interrupted,
    notes: run.notes,
    outDir: b.outDir,
  };
}

/** manifest.json: how the run was started (options without the key), what it measured, and its plan. */
export function writeRunManifest(w: RunWriter, m: { opts: RunOptions; run: ResolvedRun; createdAt: Date; runKey: string | undefined; power?: RunPower }): void {
  const { opts, run } = m;
  const { plan } = run;
  const server = plan.target.resolved;
  w.writeJson('manifest.json', {
    tool: { name: 'inferbench', version: toolVersion() },
    createdAt: m.createdAt.toISOString(),
    node: process.version,
    command: 'run',
    argv: redactArgv(process.argv.slice(2)),
    options: { ...opts, apiKey: opts.apiKey ? '<redacted>' : undefined },
    target: { url: opts.target ?? null, simulated: run.sim !== undefined, sim: run.sim?.description, api: run.dialect.name, engine: server?.engine, model: server?.model, detection: server?.detection },
    seed: opts.seed,
    ...(m.power ? { power: m.power } : {}),
    ...(plan.distribution.shard ? { shard: { ...plan.distribution.shard, runKey: m.runKey } } : {}),
    plan,
  });
}

/** After the last row: the final files and lines, and the exit code. */
export async function finishRun(
  b: RunDocBase,
  result: BenchmarkResult,
  health: ClientHealth,
  writer: RunWriter,
  io: { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream },
): Promise<{ doc: RunSummaryDoc; exitCode: number }> {
  const { opts, outDir } = b;
  const human = opts.json ? io.stderr : io.stdout;
  const say = (line: string): void => void human.write(`${line}\n`);
  const w = writer;
  const doc: RunSummaryDoc = { ...runSummaryDoc(b, result.stages, result.interrupted), health };
  writeRunSummary(w, {
    summary: doc,
    complete: !result.interrupted,
    files: {
      ...(opts.formats.includes('md') ? { 'table.md': renderMarkdownReport(doc) } : {}),
      ...(opts.formats.includes('csv') ? { 'table.csv': renderCsvReport(doc) } : {}),
    },
  });
  // The terminal gets the compact table (--columns), table.md the full seed layout.
  if (opts.formats.includes('table')) say(`\n${renderTerminalReport(doc, { ...(opts.columns ? { columns: opts.columns } : {}), style: terminalStyle(human) })}`);
  say(shortWindowRules(opts));
  const repeats = datasetRepeats(opts.workload.data, b.run.prompts.workload.size ?? 0, result.stages);
  if (repeats) say(`note: ${repeats}`);
  if (doc.health) say(healthLine(doc.health));
  const reportFiles = w.failure ? [] : await writeRunReportFiles(outDir, opts.formats).catch((err: unknown) => (isFsError(err) ? (w.recordFailure(err.path ?? outDir, err), []) : Promise.reject(err)));
  if (!w.failure) say(`saved: ${join(outDir, 'summary.json')}, requests.jsonl${opts.formats.includes('md') ? ', table.md' : ''}${opts.formats.includes('csv') ? ', table.csv' : ''}${reportFiles.map((f) => `, ${f}`).join('')}`);
  if (result.interrupted && !w.failure) say(`interrupted: \`inferbench run --resume ${outDir}\` runs the row that was cut and the rows after it`);
  if (opts.json) io.stdout.write(`${JSON.stringify({ schemaVersion: 1, ...doc, complete: !result.interrupted }, null, 2)}\n`);

  const anyOk = result.stages.some((s) => s.requests.ok > 0);
  const exitCode = w.failure ? 1 : result.interrupted ? 130 : anyOk && !result.stoppedBecause && !capacityFailed(doc) ? 0 : 1;
  if (w.failure) io.stderr.write(`error: ${diskFailureLine(w.failure, { stopped: result.interrupted, outDir })}\n`);
  else if (result.stoppedBecause) io.stderr.write(`error: ${result.stoppedBecause}\n`);
  else if (!anyOk && !result.interrupted) io.stderr.write(`error: ${noSuccessMessage(result.stages)}\n`);
  return { doc, exitCode };
}
