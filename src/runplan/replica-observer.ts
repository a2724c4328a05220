/**
 * Several replicas (`--target URL,URL,…`): each replica's own /metrics sampled through the run (one
 * TelemetrySampler per URL, off the hot path), and after each row its `replicas[]` completed with what the records
 * cannot say — the URL, replicas that served nothing, a replica that went down, its server gauges and its prefix-cache
 * hit rate where usage did not report one — the row's server gauges (the replicas' added up) and its replica lines
 * recomputed. Between rows, the idle wait reads every replica's gauges (readGauges).
 */
import type { ReplicaSender } from '../load/replica-sender.js';
import { replicaWarnings } from '../metrics/replica-figures.js';
import { replicasServerTelemetry, rowServerTelemetry } from '../metrics/server-gauges.js';
import type { StageSummary } from '../metrics/summary.js';
import type { ReplicaFigures } from '../results/stage.js';
import type { ServerSample } from '../transport/prometheus.js';
import { TELEMETRY_INTERVAL_MS, TelemetrySampler } from '../transport/telemetry.js';
import type { RunObserver } from './observer.js';

export interface ReplicaWatch {
  observer: RunObserver;
  /** Which replicas have /metrics (their samplers then run until stop()). */
  start(): Promise<boolean[]>;
  stop(): void;
  /** Every replica's samples, tagged with its index (telemetry.jsonl). */
  series(): Array<Record<string, unknown>>;
  /** Whether any replica has running/waiting gauges (known after start()). */
  readonly hasGauges: boolean;
  /** One fresh reading of every replica with gauges, added up (the idle wait between rows); see sumReadings. */
  readGauges(): Promise<ServerSample | undefined>;
}

export function watchReplicas(urls: readonly string[], sender: ReplicaSender, apiKey?: string): ReplicaWatch {
  const samplers = urls.map((u) => new TelemetrySampler(u, apiKey));
  // One timer reads every replica at once: their readings, added up for the row's gauges, are then of one moment.
  let timer: NodeJS.Timeout | undefined;
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
    start: async () => {
      const has = await Promise.all(samplers.map((s) => s.start({ timer: false })));
      if (has.some(Boolean)) {
        timer = setInterval(() => {
          for (const s of samplers) void s.tick();
        }, TELEMETRY_INTERVAL_MS);
        timer.unref();
      }
      return has;
    },
    stop: () => {
      if (timer) clearInterval(timer);
      for (const s of samplers) s.stop();
    },
    series: () => samplers.flatMap((s, replica) => s.series().map((x) => ({ replica, ...x }))),
    get hasGauges() {
      return samplers.some((s) => s.hasGauges);
    },
    readGauges: async () => sumReadings(await Promise.all(samplers.filter((s) => s.hasGauges).map((s) => s.readNow()))),
  };
}

/**
 * The replicas' readings as one: running and waiting added up, so that "running + waiting = 0" means every replica
 * is idle. A replica whose /metrics did not answer is left out of the sum (one that went down runs nothing); none
 * answering is no reading.
 */
export function sumReadings(readings: readonly (ServerSample | undefined)[]): ServerSample | undefined {
  const got = readings.filter((r): r is ServerSample => r !== undefined && (r.running !== undefined || r.waiting !== undefined));
  if (got.length === 0) return undefined;
  return {
    atMs: Math.max(...got.map((r) => r.atMs)),
    running: got.reduce((a, r) => a + (r.running ?? 0), 0),
    waiting: got.reduce((a, r) => a + (r.waiting ?? 0), 0),
  };
}

/** Fills in one finished row's replicas[] and its server gauges (exported for tests). */
export function completeRow(s: StageSummary, urls: readonly string[], sender: ReplicaSender, samplers: readonly Pick<TelemetrySampler, 'samplesOf'>[] = []): void {
  const byIndex = new Map((s.replicas ?? []).map((r) => [r.index, r]));
  const down = sender.down();
  const list: ReplicaFigures[] = urls.map((url, index) => {
    const r: ReplicaFigures = byIndex.get(index) ?? { index, sent: 0, ok: 0, errors: 0, incomplete: 0, outputTokenThroughput: 0 };
    r.url = url;
    const d = down[index];
    const rowEnd = s.endedAtMs ?? Number.POSITIVE_INFINITY;
    if (d && d.atMs <= rowEnd) r.down = { atS: Math.max(0, (d.atMs - (s.startedAtMs ?? d.atMs)) / 1000), error: d.error };
    const sampler = samplers[index];
    const server = sampler ? rowServerTelemetry(sampler.samplesOf(s.index), s.window) : undefined;
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
  // The row's gauge column: the replicas' running and waiting added up at each moment (each replica's stay in replicas[]).
  const combined = replicasServerTelemetry(samplers.map((x) => x.samplesOf(s.index)), s.window);
  if (combined) s.server = combined;
  const lines = replicaWarnings(list, { balance: sender.balance });
  if (lines.length > 0) s.replicaWarnings = lines;
  else delete s.replicaWarnings;
}
