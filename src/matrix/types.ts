/**
 * `inferbench matrix`: the cells (a server and its values), what happened to each, and matrix.json, the matrix
 * folder's index. Field names here are a contract (issue 31 item 3): add fields, rename none.
 */

export type CellStatus = 'ok' | 'failed-to-start' | 'not-ready' | 'run-failed' | 'skipped';

/** One configuration to start, measure and stop. */
export interface CellSpec {
  /** Unique, folder-safe: the cell's folder in the matrix folder. */
  name: string;
  /** The server it runs (`--server-cmd NAME=CMD`'s NAME; `server` for a plain --server-cmd). */
  server: string;
  /** Its values: every --vary key (or the cell's own in --cells), which fill the command's placeholders. */
  params: Record<string, string>;
  /** Start command with placeholders ({port}, {name}, every param); absent with `url`. */
  command?: string;
  /** Stop command (same placeholders), for start commands that return at once. */
  stopCommand?: string;
  /** A server already running (`--server-url NAME=URL`): measured, never started or stopped. */
  url?: string;
  /** This cell's own ready timeout (a cells file's `readyTimeout`), seconds; default the matrix's --ready-timeout. */
  readyTimeoutSeconds?: number;
}

/** The figures a cell's run headlines (its busiest row with successes; its capacity answer). */
export interface CellHeadline {
  profile: string;
  /** Rows in the run, and rows with at least one successful request. */
  rows: number;
  requestThroughput: number | null;
  outputTokenThroughput: number | null;
  ttftMedianMs: number | null;
  itlMedianMs: number | null;
  /** The row the figures above come from (a capacity cell: the busiest probe that met its SLO). */
  row?: string;
  /** Capacity cells: false when no probe met the SLO, so the figures are those of a probe that missed it. */
  withinSlo?: boolean;
  /** Failed requests ÷ all measured requests over every row. */
  failedShare: number;
  capacity?: { axis: string; unit: string; feasibleMax: number | null; precision: number; verdict: string };
}

export interface CellResult extends CellSpec {
  status: CellStatus;
  /** Spawn → ready, seconds; null when never ready or not launched (`url`). */
  startupSeconds: number | null;
  /** Latency of the one-token readiness request on the cold server; null when never ready. */
  firstRequestMs: number | null;
  /** The cell's run folder, relative to the matrix folder; null when no run started. */
  runDir: string | null;
  /** Why it failed (with the server log's last lines), a warning (port still busy after stop), or null. */
  error: string | null;
  headline: CellHeadline | null;
  /** The server's log, relative to the matrix folder; null for `url` cells. */
  serverLog: string | null;
  /** The port it was given, the server's process group (gone once the cell is done) and the engine detected. */
  port?: number;
  pid?: number;
  engine?: string;
}

export interface MatrixDoc {
  schemaVersion: 1;
  kind: 'matrix';
  createdAt: string;
  updatedAt: string;
  /** running: cells left; finished: every cell has a final status; interrupted: Ctrl-C stopped it (resume with --resume). */
  state: 'running' | 'finished' | 'interrupted';
  /** The `run` flags every cell measures with (after `--`). */
  runArgs: string[];
  readyTimeoutSeconds: number;
  stopTimeoutSeconds: number;
  /** compare's prices for capacity per dollar (--gpu-hour-price), kept for --resume. */
  gpuHourPrice?: string;
  cells: CellResult[];
}

/** A cell still to run: never started, or stopped by Ctrl-C before it finished. */
export function unfinished(cell: CellResult): boolean {
  return cell.status === 'skipped';
}
