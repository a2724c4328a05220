import { parseNumber, parseSlo } from '../config/parse.js';
import { configError } from '../core/errors.js';
import { buildCompareBundle } from '../report/bundles.js';
import { parseFormats } from '../report/outputs.js';
import { DEFAULT_REPORT_FORMATS, emit, openRuns, type ReportFlags } from './report-command.js';
import { toolVersion } from './version.js';

type Io = { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream };

/** `inferbench compare RUN RUN...`: side-by-side seed tables, deltas and a verdict at matched load. */
export async function compareCommand(refs: readonly string[], flags: ReportFlags, io: Io): Promise<number> {
  parseFormats(flags.format ?? DEFAULT_REPORT_FORMATS);
  const problems: string[] = [];
  const slo = parseSlo(flags.slo, problems);
  const price = parseNumber('--gpu-hour-price', flags.gpuHourPrice, problems, { positive: true });
  if (problems.length) throw configError(problems.join('; '));
  if (refs.length < 2) throw configError('compare needs at least two runs', 'for one run use `inferbench report RUN`; list ids with `inferbench ls`');
  const runs = openRuns(refs, flags.results, io);
  const bundle = buildCompareBundle(runs, { ...(slo ? { slo } : {}), ...(price !== undefined ? { gpuHourPrice: price } : {}) }, toolVersion());
  return emit(bundle, flags, io);
}
