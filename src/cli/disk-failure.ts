import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WriteFailure } from '../store/write-errors.js';

/** Rows in the run folder's summary.json: what a `--resume` keeps. */
function savedRows(outDir: string): number {
  try {
    const doc = JSON.parse(readFileSync(join(outDir, 'summary.json'), 'utf8')) as { stages?: unknown[] };
    return doc.stages?.length ?? 0;
  } catch {
    return 0;
  }
}

/**
 * The one `error:` line of a run whose folder stopped taking writes (disk full, I/O error): which file, why, what the
 * folder still holds (whole records only: see RunWriter) and what to do.
 */
export function diskFailureLine(f: WriteFailure, run: { stopped: boolean; outDir: string }): string {
  if (!run.stopped) return `${f.message}: every row was measured (the table above) but the run folder is not complete; ${f.todo}, then run again`;
  const rows = savedRows(run.outDir);
  const kept = rows > 0 ? `summary.json keeps the ${rows} finished row${rows === 1 ? '' : 's'}` : 'no row had finished';
  return `${f.message}: the run stopped — ${kept}, requests.jsonl whole records only; ${f.todo}, then continue it with \`inferbench run --resume ${run.outDir}\``;
}
