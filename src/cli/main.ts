import { Command, CommanderError, Option } from 'commander';
import { isUserError, InferbenchError } from '../core/errors.js';
import { EXAMPLES } from './help-examples.js';
import { addExamples, GROUP, HELP_CONFIG, opt } from './help-format.js';
import { addPlanCommand } from './plan-flags.js';
import { k8sFlags } from './k8s-flags.js';
import { matrixFlags } from './matrix-flags.js';
import { commandFlags, withFlags } from './run-flags.js';
import { toolVersion } from './version.js';
import { withSources } from './flag-sources.js';

/** Where the commands write: the process's streams, or (runCliInProcess, tests) streams that keep the text. */
export interface CliIo {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

const processIo: CliIo = { stdout: process.stdout, stderr: process.stderr };

/** A subcommand with its grouped options and examples. */
function command(program: Command, name: string, description: string, ...lists: Option[][]): Command {
  return addExamples(withFlags(program.command(name).description(description), ...lists), EXAMPLES[name] ?? []);
}

export function buildProgram(io: CliIo = processIo): Command {
  const program = new Command('inferbench')
    .description('Benchmark LLM inference servers — or the built-in simulated engine.')
    .version(toolVersion())
    .configureHelp(HELP_CONFIG)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  // commander's own messages (usage errors, --help) where the commands write; settings pass to the subcommands below.
  if (io !== processIo) program.configureOutput({ writeOut: (t) => void io.stdout.write(t), writeErr: (t) => void io.stderr.write(t) });
  addExamples(program, [...(EXAMPLES['run'] ?? []).slice(0, 2), ...(EXAMPLES['predict'] ?? []).slice(0, 1), ...(EXAMPLES['sim'] ?? []).slice(0, 1)]);

  command(program, 'run', 'measure a server (default: the built-in simulated engine) and print the seed tables', commandFlags('run'))
    .action(async (flags: Record<string, unknown>, cmd: Command) => {
      const { resolveRunOptions } = await import('../config/run-options.js');
      const { runCommand } = await import('./run-command.js');
      const notices: string[] = [];
      const { ui, dryRun, plan: planFile, ...runFlags } = flags;
      // --gate-against: the thresholds and baseline runs are checked before anything runs (gate-command.ts).
      const gate = await (await import('./gate-command.js')).runGateFlags(flags);
      const saved = planFile !== undefined ? (await import('./run-plan-flags.js')).planRunInputs(flags, cmd) : undefined;
      const opts = saved?.opts ?? resolveRunOptions(withSources(runFlags, cmd), process.env, undefined, notices);
      printNotices(notices, opts.json || dryRun === true, io);
      const outcome = await runCommand(opts, io, { ui: ui === true, dryRun: dryRun === true, ...(saved ? { plan: saved.plan } : {}) });
      process.exitCode = gate && outcome.dir !== undefined ? await gate.after(outcome, opts.json, io) : outcome.exitCode;
      await outcome.dashboard?.hold(io.stderr);
    });

  command(program, 'sim', "serve the simulated engine on 127.0.0.1, speaking one engine's API", commandFlags('sim'))
    .action(async (flags: Record<string, unknown>) => {
      const { simCommand } = await import('./sim-command.js');
      process.exitCode = await simCommand(flags as unknown as import('./sim-command.js').SimFlags, io);
    });

  command(program, 'predict', 'answer the same profiles from the simulated engine in virtual time (well under a second)', commandFlags('predict'))
    .action(async (flags: Record<string, unknown>, cmd: Command) => {
      if (Array.isArray(flags['catalog'])) {
        const { loadCatalogFile } = await import('../sim/catalog/load-file.js');
        for (const file of flags['catalog'] as string[]) loadCatalogFile(file);
      }
      if (typeof flags['check'] === 'string' || typeof flags['seedFile'] === 'string') {
        const { checkCalibration, seedCompareCommand, tableCheckCommand } = await import('./seed-compare-command.js');
        // --calibration FILE: the published figures beside predictions under those constants (default: the shipped ones).
        const calibration = checkCalibration(flags);
        process.exitCode = typeof flags['check'] === 'string'
          ? tableCheckCommand(flags['check'], flags['json'] === true, io.stdout, calibration)
          : seedCompareCommand(flags['seedFile'] as string, flags['json'] === true, io.stdout, calibration);
        return;
      }
      const { resolveRunOptions } = await import('../config/run-options.js');
      const { predictCommand, readClusterFlags } = await import('./predict-command.js');
      const notices: string[] = [];
      const opts = resolveRunOptions(withSources(flags, cmd), process.env, undefined, notices);
      printNotices(notices, opts.json, io);
      const { readCalibrationFlags } = await import('./calibration-flags.js');
      const { parseSpecDecode } = await import('../sim/engine/spec-decode.js');
      const { readSlotFlags } = await import('./llamacpp-flags.js');
      const { readPdFlags } = await import('../sim/cluster/pd.js');
      const features = { ...(typeof flags['specDecode'] === 'string' ? { specDecode: parseSpecDecode(flags['specDecode']) } : {}), slots: readSlotFlags(flags), ...readPdFlags(flags), ...readClusterFlags(flags) };
      process.exitCode = (await predictCommand(opts, io, readCalibrationFlags(flags, cmd), features)).exitCode;
    });

  addPlanCommand(program, io);

  command(program, 'k8s', 'print a Kubernetes Indexed Job that runs one run as N shards in N pods (fixed profiles only)', k8sFlags())
    .argument('[run-flags...]', "run's flags for every shard, after --: --target URL --profile constant --rate 30 …")
    .allowUnknownOption()
    .action(async (runArgs: string[], flags: Record<string, unknown>, cmd: Command) => {
      const { k8sCommand } = await import('./k8s-command.js');
      const explicit = (name: string): boolean => cmd.getOptionValueSource(name) === 'cli';
      process.exitCode = k8sCommand(runArgs, { ...flags, explicit }, io);
    });

  command(program, 'matrix', 'start each server configuration, wait until ready, measure it as `run` does, stop it; compare the cells', matrixFlags())
    .argument('[run-flags...]', "run's flags for every cell, after --: --profile sweep --rate 1,2,4 --slo ttft:500 …")
    .allowUnknownOption()
    .action(async (runArgs: string[], flags: Record<string, unknown>) => {
      const { matrixCommand } = await import('./matrix-command.js');
      process.exitCode = await matrixCommand(runArgs, flags as unknown as import('./matrix-command.js').MatrixFlags, io);
    });

  command(program, 'merge', 'join the folders of a run sent as shards (run --shard I/N) into one run folder, as if one process had run it', [
    opt(GROUP.outputs, '--out <dir>', 'folder for the merged run (new or empty)'),
    opt(GROUP.outputs, '--json', 'print the merged summary as JSON'),
  ])
    .argument('<dirs...>', 'the shard folders (every shard of one run, once)')
    .action(async (dirs: string[], flags: { out?: string; json?: boolean }) => {
      const { mergeCommand } = await import('./merge-command.js');
      process.exitCode = await mergeCommand(dirs, flags, io);
    });

  const { filters, outputs } = GROUP;
  const resultsDir = opt(outputs, '--results <dir>', 'results directory', { value: 'inferbench-results' });
  command(program, 'ls', 'list saved runs (id, date, profile, model, engine, GPU, source) under the results directory', [
    resultsDir,
    opt(filters, '--model <text>', 'only runs whose model contains TEXT'),
    opt(filters, '--engine <text>', 'only runs whose engine contains TEXT'),
    opt(filters, '--gpu <text>', 'only runs whose GPU contains TEXT'),
    opt(filters, '--label <text>', 'only runs whose label contains TEXT'),
    opt(filters, '--since <date>', 'only runs created on or after DATE (YYYY-MM-DD or ISO time)'),
    opt(outputs, '--json', 'print the list as JSON'),
  ]).action(async (flags: Record<string, unknown>) => {
    const { lsCommand } = await import('./ls-command.js');
    process.exitCode = lsCommand(flags, io);
  });

  command(program, 'ui', 'local web dashboard on 127.0.0.1: runs, one run, compare, and runs in progress, live', [
    opt(GROUP.server, '--port <n>', 'port (0 = any free port)', { shown: '8377, or a free one when that is taken' }),
    opt(outputs, '--results <dir>', 'results directory', { value: 'inferbench-results' }),
  ]).action(async (flags: Record<string, unknown>) => {
    const { uiCommand } = await import('./ui-command.js');
    process.exitCode = await uiCommand(flags, io);
  });

  command(program, 'import', "turn other tools' result files (GuideLLM, vLLM bench serve, SGLang bench_serving, AIPerf, genai-bench) into inferbench runs", [
    opt(outputs, '--label <text>', 'label stored with each imported run', { shown: 'the tool and its version' }),
    opt(outputs, '--out <dir>', 'run folder for the imported run (one file only)'),
    opt(outputs, '--results <dir>', 'results directory the run folders go under', { value: 'inferbench-results' }),
  ])
    .argument('<file...>', 'result files or folders; the tool is told from the content, not the name')
    .action(async (files: string[], flags: Record<string, unknown>) => {
      const { importCommand } = await import('./import-command.js');
      process.exitCode = importCommand(files, flags, io);
    });

  command(program, 'report', 're-render saved runs (tables, charts, HTML) without re-running them', [
    opt(outputs, '--results <dir>', 'results directory to look run ids up in', { value: 'inferbench-results' }),
    opt(outputs, '--format <list>', 'md,csv,json,html,png,svg,llmd (llmd: the llm-d benchmark report v0.2, one JSON file per row)', { value: 'md,csv,json,html,png' }),
    opt(outputs, '--columns <list>', 'columns of the tables printed here, e.g. default,p90 (see docs/reports.md)'),
    opt(outputs, '--out <dir>', 'folder for the files', { shown: './inferbench-reports/<time>-report' }),
  ])
    .argument('<run...>', 'run ids (see `inferbench ls`) or run folders')
    .action(async (refs: string[], flags: Record<string, unknown>) => {
      const { reportCommand } = await import('./report-command.js');
      process.exitCode = await reportCommand(refs, flags, io);
    });

  command(program, 'compare', 'side-by-side seed tables of saved runs, deltas vs the first run, and a verdict at matched load', [
    opt(outputs, '--results <dir>', 'results directory to look run ids up in', { value: 'inferbench-results' }),
    opt(GROUP.slo, '--slo <spec>', 'SLO in ms at p99, e.g. ttft:500,itl:50,e2e:10000'),
    opt(
      GROUP.prices,
      '--gpu-hour-price <usd|list>',
      "price of one GPU-hour, for the cost per 1M output tokens (read at the highest load meeting --slo when given) and capacity runs' requests per $: one USD for every run, or per GPU (H100=2.49,A100-80GB=1.79) looked up by each run's GPU",
    ),
    opt(GROUP.prices, '--prices <file>', 'JSON object of GPU name to USD per GPU-hour ({"H100": 2.49}); --gpu-hour-price GPU=USD pairs win over it'),
    opt(GROUP.matching, '--allow-mismatch', 'compare runs of different models, lengths/datasets, profiles or window rules anyway (refused otherwise; a WARNING is printed)'),
    opt(outputs, '--format <list>', 'md,csv,json,html,png,svg', { value: 'md,csv,json,html,png' }),
    opt(outputs, '--out <dir>', 'folder for the files', { shown: './inferbench-reports/<time>-compare' }),
  ])
    .argument('<run...>', 'two or more run ids (see `inferbench ls`) or run folders; the first is the baseline')
    .action(async (refs: string[], flags: Record<string, unknown>) => {
      const { compareCommand } = await import('./compare-command.js');
      process.exitCode = await compareCommand(refs, flags, io);
    });

  command(program, 'gate', 'decide whether candidate runs regressed against baseline runs beyond noise, per metric and row (CI: exit 0 pass, 1 fail, 3 inconclusive)', commandFlags('gate'))
    .action(async (flags: Record<string, unknown>) => {
      const { gateCommand } = await import('./gate-command.js');
      process.exitCode = await gateCommand(flags, io);
    });

  return program;
}

export { withSources } from './flag-sources.js';

/** Settings implied from the flags, one `note:` line each, where the command's human output goes. */
function printNotices(notices: readonly string[], toStderr: boolean, io: CliIo): void {
  for (const n of notices) (toStderr ? io.stderr : io.stdout).write(`note: ${n}\n`);
}

/** Entry point: maps user mistakes to one line and exit 2, other failures to exit 1. */
export async function main(argv: string[]): Promise<void> {
  // `inferbench … | head` closes the pipe early: stop quietly, as Unix tools do.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
      throw err;
    });
  }
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    process.exitCode = reportError(err);
  }
}

/**
 * `inferbench ARGV` in this process (tests: no child process, no start-up), its output on `io`: resolves with the exit
 * code main() would leave, the process's own exit code untouched. One at a time in a thread (the commands set
 * process.exitCode); a command that serves until a signal (sim, ui) does not return.
 */
export async function runCliInProcess(argv: readonly string[], io: CliIo): Promise<number> {
  const saved = process.exitCode;
  process.exitCode = undefined;
  try {
    await buildProgram(io).parseAsync([...argv], { from: 'user' });
    return Number(process.exitCode ?? 0);
  } catch (err) {
    return reportError(err, io.stderr);
  } finally {
    process.exitCode = saved;
  }
}

function reportError(err: unknown, stderr: { write(s: string): unknown } = process.stderr): number {
  if (err instanceof CommanderError) {
    // commander already printed its message (and help where asked for)
    return err.exitCode === 0 ? 0 : 2;
  }
  if (isUserError(err)) {
    stderr.write(`error: ${err.message}${err.hint ? ` (${err.hint})` : ''}\n`);
    return 2;
  }
  if (err instanceof InferbenchError) {
    stderr.write(`error: ${err.message}${err.hint ? ` (${err.hint})` : ''}\n`);
    // Nothing answering at --target is the same mistake whether the port refuses or stays silent.
    return err.code === 'E_CONNECT' || err.code === 'E_CONNECT_TIMEOUT' ? 2 : 1;
  }
  const e = err as Error;
  stderr.write(`internal error: ${e?.stack ?? String(err)}\n`);
  return 1;
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'));
if (invokedDirectly) void main(process.argv.slice(2));
