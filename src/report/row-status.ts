import type { StageSummary } from '../metrics/summary.js';

/**
 * How a row that did not run its course is shown, in one place for every rendering (terminal, table.md/csv, the
 * HTML report, `ls`, and the dashboard when it adopts it): a row stopped as over-saturated with the requests it
 * really sent and completed ("88/135 before stop", never "0/0"), an interrupted row with its mark, and the count of
 * rows a run list shows.
 */

/**
 * Every request a stopped row sent, ramp-up included: summary.json `beforeStop` (runs since it was recorded), else
 * what older files tell (every send of a row that measured nothing was a ramp-up one; their outcomes are unknown).
 */
export function requestsBeforeStop(s: StageSummary): { sent: number; ok?: number; failed?: number; cut?: number } {
  if (s.beforeStop) return { sent: s.beforeStop.sent, ok: s.beforeStop.ok, failed: s.beforeStop.failed, cut: s.beforeStop.cut };
  return { sent: s.requests.warmup + s.requests.total };
}

/** The row stopped as over-saturated before any measured request succeeded: its window counts say nothing. */
export const stoppedBeforeMeasuring = (s: StageSummary): boolean => s.overSaturated !== undefined && s.requests.ok === 0;

/**
 * The "ok/sent" cell: the measured requests, or for a row stopped as over-saturated before a measured success, every
 * request it sent and how many succeeded before the stop.
 */
export function okSentCell(s: StageSummary): string {
  if (!stoppedBeforeMeasuring(s)) return `${s.requests.ok}/${s.requests.total}`;
  const b = requestsBeforeStop(s);
  return `${b.ok ?? '?'}/${b.sent} before stop`;
}

/** The "Failed" cell's text for a row stopped as over-saturated before a measured success. */
export function stoppedFailureText(s: StageSummary): string {
  const b = requestsBeforeStop(s);
  const parts = ['stopped: over-saturated'];
  if (b.failed) parts.push(`${b.failed} failed`);
  const cut = b.cut ?? s.requests.incomplete;
  if (cut) parts.push(`${cut} cut`);
  return parts.join('; ');
}

/** The mark after an interrupted row's label: its figures cover only the requests finished before the stop. */
export const INTERRUPTED_MARK = '(interrupted)';

/** The line under the table for each interrupted row that still has figures (one with none is said by noneFinished). */
export function interruptedNote(s: StageSummary): string | undefined {
  if (!s.interrupted || s.requests.ok === 0) return undefined;
  const cut = s.requests.incomplete > 0 ? `, ${s.requests.incomplete} cut by the stop` : '';
  return `${s.label} ${INTERRUPTED_MARK}: figures from ${s.requests.ok} of ${s.requests.total} measured requests${cut} — not the row's steady figures; \`inferbench run --resume\` runs the row again`;
}

/**
 * What a run list says of a run's rows: "11", "11 (1 stopped: over-saturated)", "4 cells (1 failed)". A row with no
 * figure is counted by why: stopped as over-saturated, failed (errors), cut (by the end of the row or a Ctrl-C);
 * a row stopped or cut never counts as failed.
 */
export function rowCountText(stages: readonly StageSummary[], opts: { layout: 'sweep' | 'grid'; interrupted?: boolean }): string {
  const cells = new Set(stages.flatMap((s) => (s.grid ? [`${s.grid.input}/${s.grid.output}`] : [])));
  const count = opts.layout === 'grid' && cells.size > 0 ? `${cells.size} cell${cells.size === 1 ? '' : 's'}` : String(stages.length);
  const empty = stages.filter((s) => s.requests.ok === 0);
  const stopped = empty.filter((s) => s.overSaturated !== undefined).length;
  const failed = empty.filter((s) => s.overSaturated === undefined && s.requests.errors > 0).length;
  const cut = empty.filter((s) => s.overSaturated === undefined && s.requests.errors === 0 && s.requests.incomplete > 0).length;
  const notes = [stopped ? `${stopped} stopped: over-saturated` : '', failed ? `${failed} failed` : '', cut ? `${cut} cut` : '', opts.interrupted ? 'interrupted' : ''].filter((n) => n !== '');
  return `${count}${notes.length ? ` (${notes.join(', ')})` : ''}`;
}
