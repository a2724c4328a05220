/**
 * The server's own gauges (running / waiting requests, KV-cache use from its /metrics) summarized for a row: over the
 * whole row as before (transport/prometheus.ts's summarizeSamples), and over the row's measured window alone, which is
 * what the row's figures describe. A throughput row's cap search, for one, sends far more than the window keeps in
 * flight: its queue is the search's, not the window's. With several --target URLs, the replicas' gauges are added up
 * moment by moment.
 */
import type { ServerTelemetry, ServerWindowGauges } from '../results/stage.js';
import { summarizeSamples, type ServerSample } from '../transport/prometheus.js';

/** The measured window on the run's clock (StageSummary.window's fromMs / toMs). */
export interface GaugeWindow {
  fromMs?: number | undefined;
  toMs?: number | undefined;
}

/**
 * The gauges of the periodic samples inside [fromMs, toMs] (edge readings, taken before a row's first request and
 * after its last reply, read an idle server and are left out). Running and waiting are taken from one sample, the
 * busiest (the most running + waiting; the first of equals), never as two maxima from different moments.
 */
export function windowGauges(samples: readonly ServerSample[], fromMs: number, toMs: number): ServerWindowGauges {
  const inside = samples.filter((s) => !s.edge && s.atMs >= fromMs && s.atMs <= toMs);
  const out: ServerWindowGauges = { samples: inside.length };
  let busiest: ServerSample | undefined;
  const held = (s: ServerSample): number => (s.running ?? 0) + (s.waiting ?? 0);
  for (const s of inside) {
    if (s.running === undefined && s.waiting === undefined) continue;
    if (!busiest || held(s) > held(busiest)) busiest = s;
  }
  if (busiest) {
    out.peakRunningPlusWaiting = held(busiest);
    if (busiest.running !== undefined) out.runningAtPeak = busiest.running;
    if (busiest.waiting !== undefined) out.waitingAtPeak = busiest.waiting;
  }
  const mean = (pick: (s: ServerSample) => number | undefined): number | undefined => {
    const v = inside.map(pick).filter((x): x is number => x !== undefined);
    return v.length > 0 ? v.reduce((a, b) => a + b, 0) / v.length : undefined;
  };
  const running = mean((s) => s.running);
  const waiting = mean((s) => s.waiting);
  const kv = mean((s) => s.kvUsage);
  if (running !== undefined) out.meanRunning = running;
  if (waiting !== undefined) out.meanWaiting = waiting;
  if (kv !== undefined) {
    out.peakKvUsage = Math.max(...inside.map((s) => s.kvUsage).filter((x): x is number => x !== undefined));
    out.meanKvUsage = kv;
  }
  return out;
}

/** A row's server telemetry: the whole row's (summarizeSamples), and its measured window's where the row has one. */
export function rowServerTelemetry(samples: readonly ServerSample[], window: GaugeWindow | undefined): ServerTelemetry | undefined {
  const all = summarizeSamples(samples);
  if (!all || window?.fromMs === undefined || window.toMs === undefined) return all;
  return { ...all, window: windowGauges(samples, window.fromMs, window.toMs) };
}

/** Readings of two replicas further apart than this are not one moment (they are read twice a second). */
const SAME_MOMENT_MS = 250;

/**
 * Several replicas' samples as one server's: at each periodic reading of any replica, every replica's reading nearest
 * to it in time, running and waiting added up, KV use the fullest replica's. `run` reads all replicas on one timer
 * (replica-observer.ts), so the nearest readings are of the same tick, milliseconds apart; a moment where some replica
 * has no reading within a quarter second (a skipped, slow reading) is left out. Taking each replica's latest reading
 * instead would add one replica's state to another's from up to half a second earlier, and show more requests than
 * the client ever had in flight. Counters are left out: each replica keeps its own (replicas[].server).
 */
export function combinedReplicaSamples(perReplica: readonly (readonly ServerSample[])[], sameMomentMs = SAME_MOMENT_MS): ServerSample[] {
  const live = perReplica.map((list) => list.filter((s) => !s.edge).sort((a, b) => a.atMs - b.atMs)).filter((list) => list.length > 0);
  const out: ServerSample[] = [];
  const moments = live.flat().map((s) => s.atMs).sort((a, b) => a - b);
  for (const at of moments) {
    const now = live.map((list) => nearest(list, at));
    if (now.some((x) => x === undefined || Math.abs(x.atMs - at) > sameMomentMs)) continue;
    const readings = now as ServerSample[];
    const sum = (pick: (x: ServerSample) => number | undefined): number | undefined => {
      const v = readings.map(pick).filter((x): x is number => x !== undefined);
      return v.length > 0 ? v.reduce((a, b) => a + b, 0) : undefined;
    };
    const kv = readings.map((x) => x.kvUsage).filter((x): x is number => x !== undefined);
    const sample: ServerSample = { atMs: at };
    const running = sum((x) => x.running);
    const waiting = sum((x) => x.waiting);
    if (running !== undefined) sample.running = running;
    if (waiting !== undefined) sample.waiting = waiting;
    if (kv.length > 0) sample.kvUsage = Math.max(...kv);
    out.push(sample);
  }
  return out;
}

/** The reading of a time-sorted list nearest to `atMs` (binary search). */
function nearest(sorted: readonly ServerSample[], atMs: number): ServerSample | undefined {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as ServerSample).atMs < atMs) lo = mid + 1;
    else hi = mid;
  }
  const after = sorted[lo];
  const before = sorted[lo - 1];
  if (!before) return after;
  if (!after) return before;
  return atMs - before.atMs <= after.atMs - atMs ? before : after;
}

/**
 * The row's server gauges from several replicas' samples (combinedReplicaSamples), or undefined when no replica was
 * read in the row. A row shorter than the sampling interval may hold edge readings only: no samples, as with one server.
 */
export function replicasServerTelemetry(perReplica: readonly (readonly ServerSample[])[], window: GaugeWindow | undefined): ServerTelemetry | undefined {
  const read = perReplica.filter((list) => list.length > 0).length;
  if (read === 0) return undefined;
  const combined = combinedReplicaSamples(perReplica);
  const hasWindow = window?.fromMs !== undefined && window.toMs !== undefined;
  const row = rowServerTelemetry(combined, window) ?? { samples: 0, ...(hasWindow ? { window: { samples: 0 } } : {}) };
  return { ...row, replicas: read };
}
