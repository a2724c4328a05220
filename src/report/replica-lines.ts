/**
 * The per-replica lines under a table (several --target URLs, or a router's --replica-header): one note per row, a
 * heading with one nested item per replica — its share of the requests, its figures, the requests the client held in
 * flight on it, its cache hits and its own /metrics — then the lines naming a replica slower, busier, loaded with
 * more requests, or down. A note is one string with its nested items on lines of their own ("\n  - "): table.md
 * writes it as a nested Markdown list, the terminal as an indented one.
 */
import type { StageSummary } from '../metrics/summary.js';
import type { ReplicaFigures } from '../results/stage.js';
import type { ReplicaEnergy } from '../results/energy.js';
import { replicaEnergyText } from './energy-notes.js';
import { SERVER_GAUGES_HEADER, serverGaugesText } from './layouts.js';

const f1 = (n: number | undefined): string => (n === undefined || Number.isNaN(n) ? '—' : n.toFixed(1));

function replicaLine(r: ReplicaFigures, energy?: ReplicaEnergy): string {
  const who = r.url ?? (r.name !== undefined ? `"${r.name}"` : '');
  const cache = r.prefixCacheHitRate !== undefined ? `, cache hit ${(100 * r.prefixCacheHitRate).toFixed(1)}%` : '';
  const failed = r.errors + r.incomplete > 0 ? `, ${r.errors} failed${r.incomplete > 0 ? `, ${r.incomplete} cut` : ''}` : '';
  const down = r.down ? ` — DOWN at ${r.down.atS.toFixed(1)} s` : '';
  const inFlight = r.meanInFlight !== undefined ? `, ${f1(r.meanInFlight)} in flight (mean)` : '';
  const gauges = serverGaugesText(r.server);
  const server = gauges !== '—' ? `, ${SERVER_GAUGES_HEADER.replace(/^Server/, 'server')} ${gauges}` : '';
  return `replica ${r.index}${who ? ` ${who}` : ''}: ${r.ok}/${r.sent} ok${failed}, TTFT p50 ${f1(r.ttftMs?.p50)} p99 ${f1(r.ttftMs?.p99)} ms, ITL p50 ${f1(r.itlMs?.p50)} p99 ${f1(r.itlMs?.p99)} ms, ${f1(r.outputTokenThroughput)} output tok/s${inFlight}${cache}${server}${replicaEnergyText(energy)}${down}`;
}

/**
 * A row whose cache hit rate came from one /metrics for every replica (a router's, or `inferbench sim --replicas`'s)
 * has none per replica: the heading says so, and what would give it.
 */
function sharedCacheNote(s: StageSummary): string {
  const rate = s.prefixCacheHitRate;
  if (rate === undefined || s.prefixCacheSource === 'usage' || (s.replicas ?? []).some((r) => r.prefixCacheHitRate !== undefined)) return '';
  return `; cache hit ${(100 * rate).toFixed(1)}% over all replicas by the server's /metrics, not split by replica (cached tokens in each reply would split it: vLLM --enable-prompt-tokens-details, SGLang --enable-cache-report)`;
}

export function replicaNoteLines(rows: readonly StageSummary[]): string[] {
  const out: string[] = [];
  for (const s of rows) {
    if (!s.replicas || s.replicas.length === 0) continue;
    const items = [
      ...s.replicas.map((r) => replicaLine(r, s.energy?.replicas?.find((e) => e.index === r.index))),
      ...(s.replicaWarnings ?? []).map((w) => `! ${w}`),
    ];
    out.push(`replicas in ${s.label} (measured requests; ok/sent${sharedCacheNote(s)}):${items.map((i) => `\n  - ${i}`).join('')}`);
  }
  return out;
}
