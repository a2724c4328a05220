import { configError } from '../core/errors.js';
import { buildReportBundle, terminalText } from '../report/bundles.js';
import { parseColumns } from '../report/columns.js';
import { terminalStyle } from '../report/terminal.js';
import { defaultReportDir, parseFormats, writeBundle, type ReportBundle } from '../report/outputs.js';
import { DEFAULT_RESULTS_DIR, resolveRun, type StoredRun } from '../store/run-store.js';
import { describeWriteFailure, isFsError, writeFailureError } from '../store/write-errors.js';
import { checkOutputDir } from './preflight.js';
import { toolVersion } from './version.js';

export const DEFAULT_REPORT_FORMATS = 'md,csv,json,html,png';

export interface ReportFlags {
  results?: string;
  format?: string;
  out?: string;
  slo?: string;
  gpuHourPrice?: string;
  /** `report --columns`: the printed tables' columns (report/columns.ts). */
  columns?: string;
}

type Io = { stdout: NodeJS.WritableStream & { isTTY?: boolean }; stderr: NodeJS.WritableStream };

export function openRuns(refs: readonly string[], results: string | undefined, io: Io): StoredRun[] {
  if (refs.length === 0) throw configError('no run given', 'pass run ids or folders; list them with `inferbench ls`');
  const runs = refs.map((ref) => resolveRun(ref, results ?? DEFAULT_RESULTS_DIR));
  for (const r of runs) for (const w of r.warnings) io.stderr.write(`warning: ${r.name}: ${w}\n`);
  return runs;
}

/** Shared tail of report and compare: tables on stdout, files under --out, the file list on stderr. */
export async function emit(bundle: ReportBundle, flags: ReportFlags, io: Io): Promise<number> {
  const formats = parseFormats(flags.format ?? DEFAULT_REPORT_FORMATS);
  const columns = flags.columns !== undefined ? parseColumns(flags.columns) : undefined;
  // report.md keeps the Markdown; the terminal gets plain text (report: the compact tables, --columns).
  const text = terminalText(bundle, { ...(columns ? { columns } : {}), style: terminalStyle(io.stdout) });
  io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  const out = flags.out ?? defaultReportDir(bundle.kind);
  // A full disk (or any failed write) is one line naming the file, exit 1, as for `run`.
  const written = await writeBundle(bundle, formats, out).catch((err: unknown) => Promise.reject(isFsError(err) ? writeFailureError(describeWriteFailure(err.path ?? out, err)) : err));
  io.stderr.write(`wrote ${written.length} file${written.length === 1 ? '' : 's'} to ${out}: ${written.map((p) => p.split(/[\\/]/).pop()).join(', ')}\n`);
  return 0;
}

/** Where report/compare will write, checked before any run is read (one line and exit 2 when unusable). */
export function checkReportOut(flags: ReportFlags): void {
  checkOutputDir(flags.out ?? 'inferbench-reports', flags.out !== undefined ? '--out' : 'the reports folder');
}

/** `inferbench report RUN...`: re-render saved runs without re-running them. */
export async function reportCommand(refs: readonly string[], flags: ReportFlags, io: Io): Promise<number> {
  parseFormats(flags.format ?? DEFAULT_REPORT_FORMATS);
  if (flags.columns !== undefined) parseColumns(flags.columns);
  checkReportOut(flags);
  const runs = openRuns(refs, flags.results, io);
  return emit(buildReportBundle(runs, toolVersion()), flags, io);
}
