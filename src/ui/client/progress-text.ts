import type { LiveRun } from './api-types.js';

// How a live run's progress reads: rows, or a grid's cells. No DOM here: tests run it in Node.

/** A grid runs two rows per cell (its burst, then its low-load latency pass): progress is told in cells. */
const isGrid = (run: LiveRun): boolean => run.profile === 'grid';

/** "3 of 9 rows done", or for a grid "1 of 4 cells done" (a cell is done when its latency pass is). */
export function progressText(run: LiveRun): string {
  const planned = Math.max(run.plannedStages, run.stagesDone);
  if (isGrid(run)) return `${Math.floor(run.stagesDone / 2)} of ${Math.ceil(planned / 2)} cells done`;
  return `${run.stagesDone} of ${planned} rows done`;
}

/** The short form for the Live list: "3/9", or "1/4 cells". */
export function progressShort(run: LiveRun): string {
  const planned = Math.max(run.plannedStages, run.stagesDone);
  return isGrid(run) ? `${Math.floor(run.stagesDone / 2)}/${Math.ceil(planned / 2)} cells` : `${run.stagesDone}/${planned}`;
}

/** The row in progress: "2/9 asynchronous@4.00 req/sec", or for a grid "cell 1/4 128/512 latency pass". */
export function rowInProgress(run: LiveRun): string {
  const p = run.progress;
  if (!p) return '—';
  if (!isGrid(run)) return `${p.stageNo} ${p.label}`;
  const cells = Math.ceil(Math.max(run.plannedStages, p.stage + 1) / 2);
  const part = p.stage % 2 === 0 ? 'burst' : 'latency pass';
  return `cell ${Math.floor(p.stage / 2) + 1}/${cells} ${p.label.replace(/ latency$/, '')} ${part}`;
}
