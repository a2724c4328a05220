import { buildReportBundle } from '../report/bundles.js';
import { writeBundle, type ReportFormat } from '../report/outputs.js';
import { openRunDir } from '../store/run-store.js';
import { toolVersion } from './version.js';

/** The formats `run --format` and `predict --format` write through the report renderer (charts, HTML). */
const REPORT_ONLY = ['html', 'png', 'svg'] as const;

/**
 * `run --format html,png,svg`: the run folder read back as `inferbench report` reads it, so the files are the same
 * as `inferbench report RUN --format …` would write, into the run folder itself. Returns the file names written.
 */
export async function writeRunReportFiles(outDir: string, formats: readonly string[]): Promise<string[]> {
  const asked = REPORT_ONLY.filter((f) => formats.includes(f));
  if (asked.length === 0) return [];
  const bundle = buildReportBundle([openRunDir(outDir)], toolVersion());
  const written = await writeBundle(bundle, asked as ReportFormat[], outDir);
  return written.map((p) => p.split(/[\\/]/).pop() ?? p);
}
