/**
 * Several replicas (`--target URL,URL,…`): each replica's own /metrics sampled through the run (one
 * TelemetrySampler per URL, off the hot path), and after each row its `replicas[]` completed with what the records
 * cannot say — the URL, replicas that served nothing, a replica that went down, its server gauges and its prefix-cache
 * hit rate where usage did not report one — and the row's replica lines recomputed.
 */
import type { ReplicaSender } from '../load/replica-sender.js';
import { replicaWarnings } from '../metrics/replica-figures.js';
import type { StageSummary } from '../metrics/summary.js';
import type { ReplicaFigures } from '../results/stage.js';
import { TelemetrySampler } from '../transport/telemetry.js';
import type { RunObserver } from './observer.js';

export interface ReplicaWatch {
  observer: RunObserver;
  /** Which replicas have /metrics (their samplers then run until stop()). */
  start(): Promise<boolean[]>;
  stop(): void;
  /** Every replica's samples, tagged with its index (telemetry.jsonl). */
  series(): Array<Record<string, unknown>>;
}

export function watchReplicas(urls: readonly string[], sender: ReplicaSender, apiKey?: string): ReplicaWatch {
  const samplers = urls.map((u) => new TelemetrySampler(u, apiKey));
  const observer: RunObserver = {
    onStageEdge: async (i) => {
      await Promise.all(samplers.map((s) => (s.hasGauges ? s.markEdge(i) : undefined)));
    },
    onStageStart: (_spec, i) => {
      for (const s of samplers) s.setStage(i);
    },
    onStageEnd: (s) => completeRow(s, urls, sender, samplers),
  };
  return {
    observer,
    start: () => Promise.all(samplers.map((s) => s.start())),
    stop: () => {
      for (const s of samplers) s.stop();
    },
    series: () => samplers.flatMap((s, replica) => s.series().map((x) => ({ replica, ...x }))),
  };
}

/** Fills in one finished row's replicas[] (exported for tests). */
export function completeRow(s: StageSummary, urls: readonly string[], sender: ReplicaSender, samplers: readonly TelemetrySampler[] = []): void {
  const byIndex = new Map((s.replicas ?? []).map((r) => [r.index, r]));
  const down = sender.down();
  const list: ReplicaFigures[] = urls.map((url, index) => {
    const r: ReplicaFigures = byIndex.get(index) ?? { index, sent: 0, ok: 0, errors: 0, incomplete: 0, outputTokenThroughput: 0 };
    r.url = url;
    const d = down[index];
    const rowEnd = s.endedAtMs ?? Number.POSITIVE_INFINITY;
    if (d && d.atMs <= rowEnd) r.down = { atS: Math.max(0, (d.atMs - (s.startedAtMs ?? d.atMs)) / 1000), error: d.error };
    const server = samplers[index]?.summarize(s.index);
    if (server) {
      r.server = server;
      if (r.prefixCacheHitRate === undefined && server.prefixCacheHitRate !== undefined && server.prefixCacheSource) {
        r.prefixCacheHitRate = server.prefixCacheHitRate;
        r.prefixCacheSource = server.prefixCacheSource;
      }
    }
    return r;
  });
  s.replicas = list;
  const lines = replicaWarnings(list);
  if (lines.length > 0) s.replicaWarnings = lines;
  else delete s.replicaWarnings;
}
