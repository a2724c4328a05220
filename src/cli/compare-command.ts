import { parseNumber, parseSlo } from '../config/parse.js';
import { configError } from '../core/errors.js';
import { loadPriceFile, parsePriceList } from '../plan/prices.js';
import { buildCompareBundle } from '../report/bundles.js';
import { mismatchText, runMismatches } from '../report/comparability.js';
import { lengthGapTexts, measuredLengthGaps, MEASURED_LENGTH_TOLERANCE } from '../report/measured-lengths.js';
import { seriesNames } from '../report/series.js';
import type { PriceOptions } from '../report/gpu-prices.js';
import { parseFormats } from '../report/outputs.js';
import { DEFAULT_REPORT_FORMATS, checkReportOut, emit, openRuns, type ReportFlags } from './report-command.js';
import { toolVersion } from './version.js';

type Io = { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream };

export interface CompareFlags extends ReportFlags {
  /** Compare runs of different models, workloads, profiles or window rules anyway (with a WARNING). */
  allowMismatch?: boolean;
  /** JSON object of catalog GPU name to USD per GPU-hour; --gpu-hour-price GPU=USD pairs win over it. */
  prices?: string;
}

const PRICE_EXAMPLE = 'give one USD price for every run (--gpu-hour-price 2.49) or one per GPU (--gpu-hour-price H100=2.49,A100-80GB=1.79)';

/**
 * `--gpu-hour-price 2.49` (one price for every run, as before), `--gpu-hour-price H100=2.49,A100-80GB=1.79`
 * and/or `--prices FILE` (a price per catalog GPU, looked up by each run's recorded GPU; the flag wins).
 */
export function readComparePrices(flags: Pick<CompareFlags, 'gpuHourPrice' | 'prices'>, problems: string[]): PriceOptions {
  const raw = flags.gpuHourPrice;
  const file = flags.prices !== undefined ? loadPriceFile(flags.prices) : undefined;
  if (raw !== undefined && raw.includes('=')) return { gpuHourPrices: { ...file, ...parsePriceList(raw) } };
  const before = problems.length;
  const price = parseNumber('--gpu-hour-price', raw, problems, { positive: true });
  if (problems.length > before) {
    problems[problems.length - 1] += `; ${PRICE_EXAMPLE}`;
    return {};
  }
  if (price !== undefined && file !== undefined) {
    throw configError(
      `--gpu-hour-price ${raw} is one price for every run, but --prices ${flags.prices} prices each GPU`,
      'pass one of them, or override GPUs of the file with --gpu-hour-price GPU=USD pairs',
    );
  }
  if (price !== undefined) return { gpuHourPrice: price };
  return file !== undefined ? { gpuHourPrices: file } : {};
}

/** `inferbench compare RUN RUN...`: side-by-side seed tables, deltas and a verdict at matched load. */
export async function compareCommand(refs: readonly string[], flags: CompareFlags, io: Io): Promise<number> {
  parseFormats(flags.format ?? DEFAULT_REPORT_FORMATS);
  const problems: string[] = [];
  const slo = parseSlo(flags.slo, problems);
  const prices = readComparePrices(flags, problems);
  if (problems.length) throw configError(problems.join('; '));
  if (refs.length < 2) throw configError('compare needs at least two runs', 'for one run use `inferbench report RUN`; list ids with `inferbench ls`');
  checkReportOut(flags);
  const runs = openRuns(refs, flags.results, io);
  // Like with like: a verdict between different models or workloads is a number about nothing. (Mixed
  // grid/sweep layouts are refused by the bundle with their own message.)
  const oneLayout = new Set(runs.map((r) => r.summary.layout)).size === 1;
  // Requested lengths alike, served lengths not (a server that stops on its own): the same refusal, with the figures.
  const lengthGaps = oneLayout ? lengthGapTexts(measuredLengthGaps(runs, seriesNames(runs))) : [];
  const differ = oneLayout ? runMismatches(runs) : [];
  const mismatches = [...differ.map(mismatchText), ...lengthGaps];
  if (mismatches.length > 0 && flags.allowMismatch !== true) {
    throw configError(
      `these runs are not comparable — they differ in ${mismatches.join('; ')}`,
      `compare runs of one model, workload, profile and window rules — capacity runs also of one SLO, attainment target, error limit and axis (engines, GPUs and quantization may differ)${lengthGaps.length ? `, whose servers produced the lengths asked (within ${MEASURED_LENGTH_TOLERANCE * 100}%: force them where the server can, e.g. ignore_eos)` : ''}, or pass --allow-mismatch to compare them anyway`,
    );
  }
  // The figures go once, in the WARNING atop the report; stderr names what differs (a terminal shows both).
  const fields = [...differ.map((m) => m.field), ...lengthGaps.map((t) => t.slice(0, t.indexOf(':')))];
  if (mismatches.length > 0) io.stderr.write(`WARNING: comparing runs that differ in ${fields.join(', ')} (--allow-mismatch): the verdict does not compare like with like — the differences are atop the report\n`);
  const bundle = buildCompareBundle(
    runs,
    { ...(slo ? { slo } : {}), ...prices, ...(mismatches.length ? { mismatches } : {}) },
    toolVersion(),
  );
  return emit(bundle, flags, io);
}
