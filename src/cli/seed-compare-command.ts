import { readFileSync } from 'node:fs';
import { configError } from '../core/errors.js';
import { renderMarkdown } from '../report/table.js';
import { CORPUS_ASSUMPTIONS, corpusScenarios, loadCorpus } from '../sim/calibrate/corpus.js';
import { loadCalibrationFile } from '../sim/calibrate/file.js';
import type { Calibration } from '../sim/calibrate/types.js';
import { parseSeedFile } from '../sim/seeds.js';
import { compareScenarios, compareSeedTables, type SeedComparisonRow, SEED_ASSUMPTIONS } from '../sim/seed-compare.js';

/** The constants a `--check`/`--seed-file` comparison uses: `--calibration FILE` (with its path), else the shipped ones. */
export interface CheckCalibration {
  path: string;
  calibration: Calibration;
}

/**
 * `--calibration FILE` for `predict --check`/`--seed-file`; a calibration fitted from runs (`--calibrate-from`) is
 * one deployment's, so it is refused here (one line, exit 2) rather than silently ignored.
 */
export function checkCalibration(flags: Record<string, unknown>): CheckCalibration | undefined {
  if (typeof flags['calibrateFrom'] === 'string') {
    throw configError('--calibrate-from fits one deployment from its runs; --check and --seed-file compare published tables', 'save it first (--calibrate-from RUN --save-calibration FILE), then pass --calibration FILE');
  }
  const path = flags['calibration'];
  return typeof path === 'string' ? { path, calibration: loadCalibrationFile(path) } : undefined;
}

/** `inferbench predict --seed-file FILE`: every published figure beside the simulator's prediction. */
export function seedCompareCommand(file: string, json: boolean, out: NodeJS.WriteStream, cal?: CheckCalibration): number {
  const started = performance.now();
  const rows = compareSeedTables(parseSeedFile(file), cal ? { calibration: cal.calibration } : {});
  if (json) {
    out.write(`${JSON.stringify({ schemaVersion: 1, file, ...(cal ? { calibration: cal.path } : {}), assumptions: SEED_ASSUMPTIONS, rows }, null, 2)}\n`);
    return 0;
  }
  printTables(rows, out);
  if (cal) out.write(`\nconstants: ${cal.path} (--calibration)`);
  out.write(
    `\n${medianLine(rows)}; ` +
      `assumptions: grid bursts of ${SEED_ASSUMPTIONS.gridBurstRequests} prompts, sweep throughput rows as bursts of ${SEED_ASSUMPTIONS.sweepBurstRequests}, async rows ${SEED_ASSUMPTIONS.sweepAsyncSeconds} s; ${(performance.now() - started).toFixed(0)} ms\n`,
  );
  return 0;
}

/**
 * `inferbench predict --check FILE`: the same for a table file in the format of data/public-tables (a JSON array
 * of measured rows); a seed text file is handed to the seed comparison.
 */
export function tableCheckCommand(file: string, json: boolean, out: NodeJS.WriteStream, cal?: CheckCalibration): number {
  let head = '';
  try {
    head = readFileSync(file, 'utf8').trimStart().slice(0, 1);
  } catch {
    // loadCorpus reports the unreadable file
  }
  if (head && head !== '[') return seedCompareCommand(file, json, out, cal);
  const started = performance.now();
  const corpus = corpusScenarios(loadCorpus(file));
  const skipped = corpus.skipped;
  const scenarios = cal ? corpus.scenarios.map((s) => ({ ...s, engine: { ...s.engine, calibration: cal.calibration } })) : corpus.scenarios;
  // A public-tables check runs minutes: a line on stderr every tenth of the rows says it is going and how far.
  let shown = 0;
  const rows = compareScenarios(scenarios, (done, total) => {
    const tenth = Math.floor((done * 10) / total);
    if (tenth <= shown) return;
    shown = tenth;
    process.stderr.write(`predict --check: ${done} of ${total} rows simulated (${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
  });
  const notRun = skipped.map((s) => ({ id: s.row.id, table: s.row.tableGroup, reason: s.reason }));
  if (json) {
    out.write(`${JSON.stringify({ schemaVersion: 1, file, ...(cal ? { calibration: cal.path } : {}), assumptions: CORPUS_ASSUMPTIONS, rows, skipped: notRun }, null, 2)}\n`);
    return 0;
  }
  printTables(rows, out);
  if (cal) out.write(`\nconstants: ${cal.path} (--calibration)`);
  for (const s of notRun) out.write(`not predicted: row ${s.id} (${s.table}): ${s.reason}\n`);
  out.write(`\n${medianLine(rows)}; ${rows.length} figures of ${scenarios.length} rows in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  return 0;
}

function printTables(rows: SeedComparisonRow[], out: NodeJS.WriteStream): void {
  const byTable = new Map<string, SeedComparisonRow[]>();
  for (const r of rows) byTable.set(r.table, [...(byTable.get(r.table) ?? []), r]);
  for (const [table, list] of byTable) {
    out.write(`\n### ${table}\n\n`);
    out.write(
      renderMarkdown({
        headers: ['Row', 'Metric', 'Published', 'Predicted', 'Error', 'Used for'],
        rows: list.map((r) => [
          r.row,
          `${r.metric} (${r.unit})`,
          r.published.toFixed(2),
          Number.isFinite(r.predicted) ? r.predicted.toFixed(2) : '—',
          Number.isFinite(r.errorPct) ? `${r.errorPct >= 0 ? '+' : ''}${r.errorPct.toFixed(1)}%` : r.note ? `— (${r.note})` : '—',
          r.role === 'fit' ? 'calibration' : r.role === 'check' ? 'check only' : `excluded${r.note ? `: ${r.note}` : ''}`,
        ]),
      }) + '\n',
    );
  }
}

function medianLine(rows: SeedComparisonRow[]): string {
  const abs = (role: string): number[] =>
    rows.filter((r) => r.role === role && Number.isFinite(r.errorPct)).map((r) => Math.abs(r.errorPct)).sort((a, b) => a - b);
  const median = (xs: number[]): string => (xs.length ? `${(xs[Math.floor(xs.length / 2)] as number).toFixed(1)}%` : '—');
  return `median |error|: ${median(abs('fit'))} over ${abs('fit').length} calibration figures, ${median(abs('check'))} over ${abs('check').length} check-only figures`;
}
