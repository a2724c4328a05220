/**
 * The matrix loop, one cell at a time: start its server (launch/), measure it (the caller's `measure`: the same
 * code path as `inferbench run`), stop it, record the outcome in matrix.json before the next cell. A cell that fails
 * to start, is never ready, whose run fails or whose server dies mid-run is recorded with its reason and the matrix
 * goes on; an abort (Ctrl-C) stops the current cell's server and leaves the cells not finished as `skipped`, which
 * `--resume` runs.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { LaunchError, fillPlaceholders, freePort, launchServer, logTail, type LaunchedServer, type ReadyAnswer } from '../launch/index.js';
import type { RunSummaryDoc } from '../results/run-summary.js';
import { CELL_RUN_DIR } from '../store/nested-runs.js';
import { headlineOf } from './headline.js';
import { writeMatrixDoc } from './matrix-file.js';
import { unfinished, type CellResult, type CellSpec, type MatrixDoc } from './types.js';

export interface MeasureOutcome {
  exitCode: number;
  /** The run's summary (summary.json's document) when it got that far. */
  doc?: RunSummaryDoc;
  /** Why the run failed, in one line. */
  error?: string;
  /** A run that measured but has something to say (a capacity search that found no load within the SLO). */
  note?: string;
  interrupted: boolean;
}

/** Runs the cell's plan against `url`, its run folder `runDir` (absolute). */
export type MeasureCell = (cell: CellSpec, url: string, runDir: string, ready: ReadyAnswer | undefined) => Promise<MeasureOutcome>;

export interface MatrixRun {
  dir: string;
  doc: MatrixDoc;
  measure: MeasureCell;
  say(line: string): void;
  signal: AbortSignal;
}

export const SERVER_LOG = 'server.log';

export async function runMatrix(m: MatrixRun): Promise<MatrixDoc> {
  const { doc } = m;
  doc.state = 'running';
  writeMatrixDoc(m.dir, doc);
  const todo = doc.cells.filter(unfinished);
  for (const [i, cell] of todo.entries()) {
    if (m.signal.aborted) break;
    m.say(`matrix: cell ${i + 1}/${todo.length} ${cell.name}`);
    Object.assign(cell, await runCell(m, cell));
    for (const line of outcomeLines(cell)) m.say(line);
    writeMatrixDoc(m.dir, doc);
  }
  for (const cell of doc.cells) if (unfinished(cell) && cell.error === null) cell.error = 'not run: the matrix was interrupted (inferbench matrix --resume DIR runs it)';
  doc.state = m.signal.aborted ? 'interrupted' : 'finished';
  writeMatrixDoc(m.dir, doc);
  return doc;
}

type Outcome = Partial<CellResult> & Pick<CellResult, 'status' | 'error'>;

async function runCell(m: MatrixRun, cell: CellResult): Promise<Outcome> {
  const folder = join(m.dir, cell.name);
  // A cell run again (--resume) starts from an empty folder: an interrupted run's rows are not this run's.
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  const runDir = join(folder, CELL_RUN_DIR);
  const rel = `${cell.name}/${CELL_RUN_DIR}`;
  const reset = { startupSeconds: null, firstRequestMs: null, runDir: null, headline: null, serverLog: null };
  if (cell.url !== undefined) {
    const measured = await measure(m, cell, cell.url, runDir, undefined);
    return { ...reset, ...measured, runDir: rel };
  }
  const port = cell.params['port'] !== undefined ? Number(cell.params['port']) : await freePort();
  const values = { ...cell.params, port, name: cell.name };
  const logPath = join(folder, SERVER_LOG);
  let server: LaunchedServer;
  try {
    server = await launchServer(
      {
        name: cell.name,
        command: fillPlaceholders(cell.command ?? '', values),
        ...(cell.stopCommand !== undefined ? { stopCommand: fillPlaceholders(cell.stopCommand, values) } : {}),
        port,
        logPath,
        readyTimeoutMs: (cell.readyTimeoutSeconds ?? m.doc.readyTimeoutSeconds) * 1000,
        stopTimeoutMs: m.doc.stopTimeoutSeconds * 1000,
      },
      m.signal,
    );
  } catch (err) {
    const base = { ...reset, serverLog: `${cell.name}/${SERVER_LOG}`, port, ...(err instanceof LaunchError && err.pid !== undefined ? { pid: err.pid } : {}) };
    if (!(err instanceof LaunchError)) return { ...base, status: 'failed-to-start', error: err instanceof Error ? err.message : String(err) };
    if (err.interrupted) return { ...base, status: 'skipped', error: 'interrupted while its server was starting (inferbench matrix --resume DIR runs it)' };
    return { ...base, status: err.status, error: withTail(err.message, err.logTail) };
  }
  m.say(`matrix: ${cell.name} ready at ${server.url} after ${server.startupSeconds.toFixed(1)} s (first request ${server.firstRequestMs.toFixed(0)} ms)`);
  const launched = {
    serverLog: `${cell.name}/${SERVER_LOG}`,
    port,
    ...(server.pid !== undefined ? { pid: server.pid } : {}),
    startupSeconds: server.startupSeconds,
    firstRequestMs: server.firstRequestMs,
    ...(server.ready.engine !== undefined ? { engine: server.ready.engine } : {}),
  };
  let outcome: Outcome;
  try {
    outcome = await measure(m, cell, server.url, runDir, server.ready);
    // A server that died mid-run: whatever the run made of it, the cell did not measure the configuration.
    if (!server.alive() && outcome.status !== 'skipped') {
      const exit = server.exit();
      const how = exit === undefined ? 'is gone' : exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
      outcome = { ...outcome, status: 'run-failed', error: withTail(`the server ${how} during the run`, logTail(logPath)) };
    }
  } finally {
    const { portFree } = await server.stop();
    if (!portFree) {
      const warning = `port ${port} still answered after the server was stopped: something of it outlived the stop`;
      m.say(`matrix: ${cell.name}: ${warning}`);
      outcome ??= { status: 'run-failed', error: warning };
      outcome.error = outcome.error === null ? warning : `${outcome.error}\n${warning}`;
    }
  }
  return { ...reset, ...launched, ...outcome, runDir: rel };
}

async function measure(m: MatrixRun, cell: CellSpec, url: string, runDir: string, ready: ReadyAnswer | undefined): Promise<Outcome> {
  let out: MeasureOutcome;
  try {
    out = await m.measure(cell, url, runDir, ready);
  } catch (err) {
    return { status: 'run-failed', error: err instanceof Error ? err.message : String(err) };
  }
  const headline = out.doc ? headlineOf(out.doc) : null;
  if (out.interrupted) return { status: 'skipped', error: 'interrupted during its run (inferbench matrix --resume DIR runs it again)', headline };
  if (out.exitCode !== 0) return { status: 'run-failed', error: out.error ?? `the run ended with exit code ${out.exitCode} (see its folder)`, headline };
  return { status: 'ok', error: out.note ?? null, headline };
}

/**
 * What the terminal says when a cell is done: its status and start-up time; for a cell that failed, why, with the
 * server log's last lines under it (as matrix.json's `error` keeps them), so a failed start says its reason.
 */
export function outcomeLines(cell: CellResult): string[] {
  const started = cell.startupSeconds !== null ? `, started in ${cell.startupSeconds.toFixed(1)} s` : '';
  if (cell.status === 'ok' || !cell.error) return [`matrix: ${cell.name}: ${cell.status}${started}`];
  const [first, ...rest] = cell.error.split('\n');
  return [`matrix: ${cell.name}: ${cell.status}${started} — ${first}`, ...rest.map((l) => `  ${l}`)];
}

function withTail(message: string, tail: string): string {
  return tail === '' ? message : `${message}\n--- server.log (last lines) ---\n${tail}`;
}
