import type { StageSummary } from '../metrics/summary.js';
import type { Table } from './table.js';

const f2 = (n: number | undefined, unit = ''): string => (n === undefined || !Number.isFinite(n) ? '—' : `${n.toFixed(2)}${unit}`);

/**
 * Reasoning models: time to the first token of the answer and the tokens spent reasoning, after the TTFT column
 * (the terminal's default columns show them too: columns.ts). `rowStages[i]` is the stage of row i.
 */
export function withReasoningColumns(table: Table, rowStages: readonly (StageSummary | undefined)[], after: string, unit: string): Table {
  if (!rowStages.some((s) => s?.metrics.reasoningTokens)) return table;
  const at = table.headers.indexOf(after) + 1;
  const cells = (s: StageSummary | undefined): string[] =>
    s && s.requests.ok > 0 ? [f2(s.metrics.ttfoMs?.mean, unit), f2(s.metrics.reasoningTokens?.mean)] : ['—', '—'];
  const headers = [...table.headers];
  headers.splice(at, 0, `Time to First Output Token${unit ? '' : ' (ms)'}`, 'Reasoning Tokens');
  return {
    headers,
    rows: table.rows.map((r, i) => {
      const row = [...r];
      row.splice(at, 0, ...cells(rowStages[i]));
      return row;
    }),
  };
}
