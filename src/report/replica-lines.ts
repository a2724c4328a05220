/**
 * The per-replica lines under a table (several --target URLs, or a router's --replica-header): one line per row and
 * replica with its share of the requests and its figures, then the lines naming a replica slower, busier or down.
 */
import type { StageSummary } from '../metrics/summary.js';
import type { ReplicaFigures } from '../results/stage.js';

const f1 = (n: number | undefined): string => (n === undefined || Number.isNaN(n) ? '—' : n.toFixed(1));

function replicaLine(r: ReplicaFigures): string {
  const who = r.url ?? (r.name !== undefined ? `"${r.name}"` : '');
  const cache = r.prefixCacheHitRate !== undefined ? `, cache hit ${(100 * r.prefixCacheHitRate).toFixed(1)}%` : '';
  const failed = r.errors + r.incomplete > 0 ? `, ${r.errors} failed${r.incomplete > 0 ? `, ${r.incomplete} cut` : ''}` : '';
  const down = r.down ? ` — DOWN at ${r.down.atS.toFixed(1)} s` : '';
  return `  replica ${r.index}${who ? ` ${who}` : ''}: ${r.ok}/${r.sent} ok${failed}, TTFT p50 ${f1(r.ttftMs?.p50)} p99 ${f1(r.ttftMs?.p99)} ms, ITL p50 ${f1(r.itlMs?.p50)} p99 ${f1(r.itlMs?.p99)} ms, ${f1(r.outputTokenThroughput)} output tok/s${cache}${down}`;
}

export function replicaNoteLines(rows: readonly StageSummary[]): string[] {
  const out: string[] = [];
  for (const s of rows) {
    if (!s.replicas || s.replicas.length === 0) continue;
    out.push(`replicas in ${s.label} (measured requests; ok/sent):`);
    for (const r of s.replicas) out.push(replicaLine(r));
    for (const w of s.replicaWarnings ?? []) out.push(`  ! ${w}`);
  }
  return out;
}
