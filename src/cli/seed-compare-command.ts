import { renderMarkdown } from '../report/table.js';
import { parseSeedFile } from '../sim/seeds.js';
import { compareSeedTables, SEED_ASSUMPTIONS } from '../sim/seed-compare.js';

/** `inferbench predict --seed-file FILE`: every published figure beside the simulator's prediction. */
export function seedCompareCommand(file: string, json: boolean, out: NodeJS.WriteStream): number {
  const started = performance.now();
  const rows = compareSeedTables(parseSeedFile(file));
  if (json) {
    out.write(`${JSON.stringify({ schemaVersion: 1, file, assumptions: SEED_ASSUMPTIONS, rows }, null, 2)}\n`);
    return 0;
  }
  const byTable = new Map<string, typeof rows>();
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
          r.predicted.toFixed(2),
          Number.isFinite(r.errorPct) ? `${r.errorPct >= 0 ? '+' : ''}${r.errorPct.toFixed(1)}%` : '—',
          r.role === 'fit' ? 'calibration' : r.role === 'check' ? 'check only' : `excluded${r.note ? `: ${r.note}` : ''}`,
        ]),
      }) + '\n',
    );
  }
  const abs = (role: string): number[] =>
    rows.filter((r) => r.role === role && Number.isFinite(r.errorPct)).map((r) => Math.abs(r.errorPct)).sort((a, b) => a - b);
  const median = (xs: number[]): string => (xs.length ? `${(xs[Math.floor(xs.length / 2)] as number).toFixed(1)}%` : '—');
  out.write(
    `\nmedian |error|: ${median(abs('fit'))} over ${abs('fit').length} calibration figures, ${median(abs('check'))} over ${abs('check').length} check-only figures; ` +
      `assumptions: grid bursts of ${SEED_ASSUMPTIONS.gridBurstRequests} prompts, sweep throughput rows as bursts of ${SEED_ASSUMPTIONS.sweepBurstRequests}, async rows ${SEED_ASSUMPTIONS.sweepAsyncSeconds} s; ${(performance.now() - started).toFixed(0)} ms\n`,
  );
  return 0;
}
