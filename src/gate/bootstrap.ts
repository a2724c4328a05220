import { Rng } from '../core/rng.js';
import type { RowSide } from './samples.js';
import { LATENCIES, type GateMetric, type Latency } from './thresholds.js';

/**
 * The bootstrap of one row's figures on one side. A resample draws the side's runs with replacement (when it has
 * more than one: repeats, so run-to-run variance counts — a hierarchical bootstrap), then within each drawn run its
 * measured requests with replacement. Statistics read the drawn requests through counts, so a percentile costs one
 * pass over the pre-sorted values (no sort per resample).
 *
 * Throughputs are each run's own window figure, moved by what the resample moved: a closed loop (or burst) serves
 * `in flight / mean latency` (Little's law), so its resampled req/s is the figure × mean e2e / resampled mean e2e;
 * an open loop that kept up serves the rate its schedule sent, so only output lengths move its tokens/s. A side's
 * throughput is the mean over its drawn runs.
 */
export interface PreparedSide {
  row: RowSide;
  /** Global index of each unit's first request. */
  offsets: number[];
  size: number;
  ok: Uint8Array;
  values: Record<Latency, Float64Array>;
  /** Per latency: global indices of the finite values, sorted by value. */
  order: Record<Latency, Int32Array>;
}

export interface Resample {
  counts: Int32Array;
  rps: number;
  outputTps: number;
}

function concat(parts: readonly Float64Array[]): Float64Array {
  const out = new Float64Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function prepareSide(row: RowSide): PreparedSide {
  const offsets: number[] = [];
  let size = 0;
  for (const u of row.units) {
    offsets.push(size);
    size += u.ok.length;
  }
  const ok = new Uint8Array(size);
  row.units.forEach((u, i) => ok.set(u.ok, offsets[i] ?? 0));
  const values = {} as Record<Latency, Float64Array>;
  const order = {} as Record<Latency, Int32Array>;
  for (const l of LATENCIES) {
    const v = concat(row.units.map((u) => u[l]));
    values[l] = v;
    const idx: number[] = [];
    for (let i = 0; i < v.length; i++) if (Number.isFinite(v[i])) idx.push(i);
    idx.sort((a, b) => (v[a] as number) - (v[b] as number));
    order[l] = Int32Array.from(idx);
  }
  return { row, offsets, size, ok, values, order };
}

/** Mean e2e and output tokens of a unit's successes under `counts` (from its offset). */
function unitMeans(side: PreparedSide, unit: number, counts: Int32Array): { e2e: number; out: number } {
  const u = side.row.units[unit];
  const off = side.offsets[unit] ?? 0;
  let w = 0;
  let e2e = 0;
  let out = 0;
  if (u) {
    for (let i = 0; i < u.ok.length; i++) {
      const c = counts[off + i] as number;
      if (c === 0 || u.ok[i] !== 1 || !Number.isFinite(u.e2e[i] as number)) continue;
      w += c;
      e2e += c * (u.e2e[i] as number);
      out += c * (Number.isFinite(u.outputTokens[i] as number) ? (u.outputTokens[i] as number) : 0);
    }
  }
  return w > 0 ? { e2e: e2e / w, out: out / w } : { e2e: Number.NaN, out: Number.NaN };
}

/** Every request once, every run once: the side's own figures. */
export function observed(side: PreparedSide): Resample {
  const counts = new Int32Array(side.size).fill(1);
  const k = side.row.units.length;
  const rps = side.row.units.reduce((a, u) => a + u.rps, 0) / k;
  const outputTps = side.row.units.reduce((a, u) => a + u.outputTps, 0) / k;
  return { counts, rps, outputTps };
}

/** One hierarchical resample (see above). */
export function resample(side: PreparedSide, base: readonly { e2e: number; out: number }[], rng: Rng): Resample {
  const counts = new Int32Array(side.size);
  const k = side.row.units.length;
  let rps = 0;
  let outputTps = 0;
  const single = new Int32Array(side.size);
  for (let d = 0; d < k; d++) {
    const unit = k === 1 ? 0 : rng.int(0, k - 1);
    const u = side.row.units[unit];
    if (!u) continue;
    const off = side.offsets[unit] ?? 0;
    const n = u.ok.length;
    single.fill(0, off, off + n);
    for (let j = 0; j < n; j++) {
      const at = off + rng.int(0, n - 1);
      single[at] = (single[at] as number) + 1;
    }
    for (let j = off; j < off + n; j++) counts[j] = (counts[j] as number) + (single[j] as number);
    const t = movedThroughputs(side, unit, base[unit], single);
    rps += t.rps;
    outputTps += t.outputTps;
  }
  return { counts, rps: rps / k, outputTps: outputTps / k };
}

/** A unit's window throughputs moved by what `counts` (its requests' weights) moved from its own means (see above). */
function movedThroughputs(side: PreparedSide, unit: number, was: { e2e: number; out: number } | undefined, counts: Int32Array): { rps: number; outputTps: number } {
  const u = side.row.units[unit];
  if (!u) return { rps: Number.NaN, outputTps: Number.NaN };
  const base = was ?? { e2e: Number.NaN, out: Number.NaN };
  const now = unitMeans(side, unit, counts);
  const lengths = base.out > 0 && Number.isFinite(now.out) ? now.out / base.out : 1;
  const latency = side.row.closed && now.e2e > 0 && Number.isFinite(base.e2e) ? base.e2e / now.e2e : 1;
  return { rps: u.rps * latency, outputTps: u.outputTps * latency * lengths };
}

/**
 * One unit's figures over a subset of its requests (local indices): what the run would have read had it measured
 * only those — a time block of it (run-noise.ts). Throughputs are moved as a resample moves them.
 */
export function subsetOf(side: PreparedSide, unit: number, indices: readonly number[], base: readonly { e2e: number; out: number }[]): Resample {
  const counts = new Int32Array(side.size);
  const off = side.offsets[unit] ?? 0;
  for (const i of indices) counts[off + i] = 1;
  return { counts, ...movedThroughputs(side, unit, base[unit], counts) };
}

/** Each unit's own means (every request once): what resampled throughputs are scaled against. */
export function unitBaselines(side: PreparedSide): { e2e: number; out: number }[] {
  const all = new Int32Array(side.size).fill(1);
  return side.row.units.map((_, i) => unitMeans(side, i, all));
}

const Q: Record<string, number> = { p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 };

/** A row figure under a resample; NaN when the side has nothing to compute it from. */
export function statistic(side: PreparedSide, r: Resample, metric: GateMetric): number {
  switch (metric.kind) {
    case 'throughput':
      return metric.id === 'rps' ? r.rps : r.outputTps;
    case 'errors': {
      let all = 0;
      let bad = 0;
      for (let i = 0; i < side.size; i++) {
        const c = r.counts[i] as number;
        all += c;
        if (side.ok[i] !== 1) bad += c;
      }
      return all > 0 ? bad / all : Number.NaN;
    }
    case 'latency': {
      const order = side.order[metric.latency];
      const v = side.values[metric.latency];
      let w = 0;
      if (metric.stat === 'mean') {
        let sum = 0;
        for (let i = 0; i < order.length; i++) {
          const g = order[i] as number;
          const c = r.counts[g] as number;
          w += c;
          sum += c * (v[g] as number);
        }
        return w > 0 ? sum / w : Number.NaN;
      }
      for (let i = 0; i < order.length; i++) w += r.counts[order[i] as number] as number;
      if (w === 0) return Number.NaN;
      // Nearest rank: the smallest value with at least q of the weight at or below it.
      const rank = Math.max(1, Math.ceil((Q[metric.stat] ?? 0.5) * w));
      let seen = 0;
      for (let i = 0; i < order.length; i++) {
        const g = order[i] as number;
        seen += r.counts[g] as number;
        if (seen >= rank) return v[g] as number;
      }
      return v[order[order.length - 1] as number] as number;
    }
    case 'capacity':
      return Number.NaN;
  }
}
