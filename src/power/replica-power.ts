/**
 * Several replicas (`--target URL,URL,…` with `--power auto`): each replica's own power source (its /metrics), and a
 * row's energy as the sum over every replica, with each replica's part beside it (`energy.replicas`). A replica
 * without a source leaves the row without a per-token figure: its joules would count only some replicas' GPUs while
 * the tokens are every replica's.
 */
import type { Energy, ReplicaEnergy } from '../results/energy.js';
import type { StageSummary } from '../results/stage.js';
import { rowEnergy, rowWindow, type WindowJoules } from './energy.js';
import type { PowerSample } from './samples.js';
import type { PowerSampler } from './sampler.js';

export interface ReplicaSource {
  /** Its place in --target's list (the row's `replicas[].index`). */
  index: number;
  url: string;
  /** Absent: the replica gave no power readings (`missing` says why). */
  sampler?: PowerSampler;
  missing?: string;
}

/** One replica's joules over a window, or why it has none. */
export interface ReplicaJoules {
  index: number;
  url: string;
  w?: WindowJoules;
  missing?: string;
}

const sourceOf = (r: ReplicaJoules): string => r.w?.source ?? 'none';

/**
 * Every replica's joules over one window, added up: the lowest coverage and the longest gap of any replica, GPUs
 * numbered on across the replicas, and a problem naming each replica that had no readings.
 */
export function sumReplicaJoules(parts: readonly ReplicaJoules[]): WindowJoules {
  const read = parts.filter((p): p is ReplicaJoules & { w: WindowJoules } => p.w !== undefined);
  const missing = parts.filter((p) => p.w === undefined);
  let offset = 0;
  const gpus: number[] = [];
  for (const p of read) {
    for (let k = 0; k < p.w.gpus.length; k++) gpus.push(offset + k);
    offset += p.w.gpus.length;
  }
  const problems = read.filter((p) => p.w.problem).map((p) => `replica ${p.index}: ${p.w.problem}`);
  if (missing.length > 0) {
    const counted = read.map((p) => p.index).join(', ');
    problems.push(`${missing.map((p) => `replica ${p.index} (${p.url}) has no power readings${p.missing ? ` (${p.missing})` : ''}`).join('; ')}: the joules count ${read.length ? `only replica ${counted}'s GPUs` : 'no GPU'} while the tokens are every replica's`);
  }
  return {
    joules: read.reduce((a, p) => a + p.w.joules, 0),
    coverage: read.length ? Math.min(...read.map((p) => p.w.coverage)) : 0,
    maxGapMs: read.length ? Math.max(...read.map((p) => p.w.maxGapMs)) : 0,
    gpus,
    source: parts.map(sourceOf).filter((x) => x !== 'none').join(' + ') || 'none',
    ...(problems.length ? { problem: problems.join('; ') } : {}),
  };
}

/** A row's energy from every replica's joules over its window: the sum, and each replica's part. */
export function replicaRowEnergy(s: StageSummary, parts: readonly ReplicaJoules[], windowS: number): Energy {
  const energy = rowEnergy(s, sumReplicaJoules(parts), windowS);
  energy.replicas = parts.map((p): ReplicaEnergy => {
    if (!p.w) return { index: p.index, url: p.url, source: 'none', gpus: [], coverage: 0, valid: false, reason: `no power readings${p.missing ? ` (${p.missing})` : ''}` };
    // The replica's own tokens: its measured requests' output over the row's window (replicas[] of the row).
    const own = s.replicas?.find((r) => r.index === p.index);
    const e = rowEnergy({ ...s, outputTokenThroughput: own?.outputTokenThroughput ?? 0, totalTokenThroughput: 0, requestThroughput: 0 }, p.w, windowS);
    return {
      index: p.index,
      url: p.url,
      source: e.source,
      joules: e.joules,
      avgWatts: e.avgWatts,
      ...(e.joulesPerOutputToken !== undefined ? { joulesPerOutputToken: e.joulesPerOutputToken } : {}),
      gpus: e.gpus,
      coverage: e.coverage,
      valid: e.valid,
      ...(e.reason ? { reason: e.reason } : {}),
    };
  });
  return energy;
}

/** The power of several replicas, one source each: what run-power.ts reads rows' energy from. */
export class ReplicaPower {
  constructor(readonly replicas: readonly ReplicaSource[]) {}

  /** The sources read, joined (`dcgm:URL1/metrics + dcgm:URL2/metrics`). */
  get label(): string {
    return this.replicas.flatMap((r) => (r.sampler ? [r.sampler.label] : [])).join(' + ');
  }

  energyOf(s: StageSummary): Energy | undefined {
    const w = rowWindow(s);
    if (!w) return undefined;
    const parts = this.replicas.map((r): ReplicaJoules => ({ index: r.index, url: r.url, ...(r.sampler ? { w: r.sampler.joulesBetween(w.fromMs, w.toMs) } : {}), ...(r.missing ? { missing: r.missing } : {}) }));
    return replicaRowEnergy(s, parts, (w.toMs - w.fromMs) / 1000);
  }

  /** Every replica's readings, each tagged with its replica (power.jsonl). */
  series(): Array<PowerSample & { epochMs: number; replica: number }> {
    return this.replicas.flatMap((r) => (r.sampler ? r.sampler.series().map((x) => ({ ...x, replica: r.index })) : []));
  }

  stop(): void {
    for (const r of this.replicas) r.sampler?.stop();
  }
}
