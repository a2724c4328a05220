/**
 * `inferbench matrix [cell flags] -- [run flags]`: start each cell's server, measure it with `inferbench run`'s own
 * code path (runCommand, the cell's URL as --target, its folder as --out), stop it, and compare the cells at the
 * end. The cells, the loop and the comparison live in src/matrix/; this file holds what belongs to a command: argv,
 * signals, the folder, exit codes.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseDuration } from '../config/parse.js';
import type { RunOptions } from '../config/run-options.js';
import { configError } from '../core/errors.js';
import { buildCells, type CellFlags } from '../matrix/cells.js';
import { isMatrixDir, newMatrixDoc, readMatrixDoc } from '../matrix/matrix-file.js';
import { buildMatrixReport } from '../matrix/report.js';
import { runMatrix, type MeasureCell } from '../matrix/run-matrix.js';
import type { CellSpec, MatrixDoc } from '../matrix/types.js';
import { writeBundle } from '../report/outputs.js';
import { fromMarkdown, terminalStyle } from '../report/terminal.js';
import { readComparePrices } from './compare-command.js';
import { runCommand } from './run-command.js';
import { noSuccessMessage } from './run-outcome.js';
import { parseRunFlags } from './run-args-parse.js';
import { toolVersion } from './version.js';

export interface MatrixFlags extends CellFlags {
  readyTimeout: string;
  stopTimeout: string;
  out?: string;
  results: string;
  resume?: string;
  gpuHourPrice?: string;
}

type Io = { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream };

/** Run flags the matrix sets per cell itself, or that cannot work per cell. */
const REFUSED: Record<string, string> = {
  '--target': 'each cell is measured at its own server\'s URL; leave --target out (a server already running: --server-url NAME=URL)',
  '--out': 'each cell\'s run goes into its folder in the matrix folder; give the matrix folder with --out before --',
  '--resume': '--resume is a matrix flag: inferbench matrix --resume DIR',
  '--plan': 'the matrix resolves the run flags per cell; give run flags, not a plan',
  '--dry-run': 'a matrix measures; leave --dry-run out',
  '--ui': 'leave --ui out (inferbench ui shows the matrix folder when it is done)',
  '--shard': 'a cell is one run; leave --shard out',
  '--json': 'the matrix prints its comparison; matrix.json holds every cell\'s figures',
};

/** Cell values that fill the run's context (the table's header fields). */
const CONTEXT_PARAMS = ['gpu', 'gpus', 'quant', 'model', 'engine-version', 'label'] as const;

export async function matrixCommand(runArgs: readonly string[], flags: MatrixFlags, io: Io): Promise<number> {
  const say = (line: string): void => void io.stderr.write(`${line}\n`);
  const { dir, doc } = flags.resume !== undefined ? resumeMatrix(flags, runArgs) : newMatrix(flags, runArgs);
  const checked = parseRun([...doc.runArgs, '--target', 'http://127.0.0.1:1']);
  const problems: string[] = [];
  const prices = readComparePrices({ gpuHourPrice: doc.gpuHourPrice }, problems);
  if (problems.length) throw configError(problems.join('; '));

  const abort = new AbortController();
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    // A second one quits at once: the launch module's exit hook kills the server's process group.
    if (++signals > 1) process.exit(130);
    say(`\n${signal}: stopping the matrix — the current cell's server is stopped, finished cells are kept (inferbench matrix --resume ${dir})`);
    abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const measure: MeasureCell = async (cell, url, runDir) => {
    const opts = parseRun([...doc.runArgs, ...contextArgs(cell), '--target', url, '--out', runDir]);
    const outcome = await runCommand(opts, io);
    const summary = outcome.doc;
    // The line run printed as its error, for matrix.json: a run in which nothing succeeded says why.
    const nothing = summary !== undefined && outcome.exitCode !== 0 && !summary.stages.some((s) => s.requests.ok > 0);
    // A capacity search that measured and found no load within the SLO (run exits 1) measured the cell: its
    // answer, "none", is the cell's figure, kept with the verdict as its note.
    const noCapacity = summary !== undefined && !nothing && outcome.exitCode === 1 && summary.capacity?.feasibleMax === null && !summary.interrupted;
    return {
      exitCode: noCapacity ? 0 : outcome.exitCode,
      ...(summary ? { doc: summary } : {}),
      ...(nothing ? { error: noSuccessMessage(summary?.stages ?? []) } : {}),
      ...(noCapacity ? { note: summary?.capacity?.verdict ?? '' } : {}),
      interrupted: outcome.exitCode === 130 || abort.signal.aborted,
    };
  };
  try {
    say(`matrix: ${doc.cells.length} cells in ${dir}`);
    await runMatrix({ dir, doc, measure, say, signal: abort.signal });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const report = buildMatrixReport(dir, doc, { ...(checked.slo ? { slo: checked.slo } : {}), ...prices }, toolVersion());
  if (report.bundle) await writeBundle(report.bundle, ['md', 'html', 'csv'], dir);
  else writeFileSync(join(dir, 'matrix.md'), report.markdown);
  io.stdout.write(`\n${fromMarkdown(report.markdown, terminalStyle(io.stdout))}`);
  say(`matrix: ${join(dir, 'matrix.json')}, matrix.md${report.bundle ? ', matrix.html' : ''}`);
  if (doc.state === 'interrupted') return 130;
  return doc.cells.every((c) => c.status === 'ok') ? 0 : 1;
}

function newMatrix(flags: MatrixFlags, runArgs: readonly string[]): { dir: string; doc: MatrixDoc } {
  for (const arg of runArgs) {
    const why = REFUSED[arg.split('=')[0] as string];
    if (why !== undefined) throw configError(`run flag ${arg.split('=')[0]}: ${why}`);
  }
  parseRun([...runArgs, '--target', 'http://127.0.0.1:1']);
  const cells = buildCells(flags);
  const p: string[] = [];
  const ready = parseDuration('--ready-timeout', flags.readyTimeout, p, { positive: true });
  const stop = parseDuration('--stop-timeout', flags.stopTimeout, p, { positive: true });
  readComparePrices({ gpuHourPrice: flags.gpuHourPrice }, p);
  if (p.length) throw configError(p.join('; '));
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const dir = resolve(flags.out ?? join(flags.results, `${stamp}-matrix`));
  if (isMatrixDir(dir)) throw configError(`${dir} holds a matrix already`, `continue it with inferbench matrix --resume ${dir}, or give a new --out`);
  if (existsSync(dir) && readdirSync(dir).length > 0) throw configError(`--out ${dir} is not empty`, 'give a new or empty folder for the matrix');
  mkdirSync(dir, { recursive: true });
  const doc = newMatrixDoc(cells, runArgs, {
    readyTimeoutSeconds: ready as number,
    stopTimeoutSeconds: stop as number,
    ...(flags.gpuHourPrice !== undefined ? { gpuHourPrice: flags.gpuHourPrice } : {}),
  });
  return { dir, doc };
}

function resumeMatrix(flags: MatrixFlags, runArgs: readonly string[]): { dir: string; doc: MatrixDoc } {
  const given = [flags.serverCmd?.length && '--server-cmd', flags.vary?.length && '--vary', flags.cells && '--cells', flags.serverUrl?.length && '--server-url', flags.out && '--out', runArgs.length && 'run flags'].filter(Boolean);
  if (given.length) throw configError(`--resume runs the matrix as it was started: leave out ${given.join(', ')}`, 'for other cells start a new matrix');
  const dir = resolve(flags.resume as string);
  const doc = readMatrixDoc(dir);
  if (doc.state === 'finished' && doc.cells.every((c) => c.status !== 'skipped')) throw configError(`the matrix in ${dir} is finished: every cell has run`, 'start a new matrix for other cells');
  return { dir, doc };
}

/** The cell's values that are run metadata, as run flags (the label defaults to the cell's name). */
function contextArgs(cell: CellSpec): string[] {
  const args: string[] = [];
  for (const key of CONTEXT_PARAMS) {
    const v = cell.params[key];
    if (v !== undefined) args.push(`--${key}`, v);
  }
  if (cell.params['label'] === undefined) args.push('--label', cell.name);
  return args;
}

/** run's own flag parser and option rules (as `inferbench k8s` checks its run flags); a mistake is one config error. */
function parseRun(args: readonly string[]): RunOptions {
  return parseRunFlags(args).opts;
}
