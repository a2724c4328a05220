/**
 * How measured energy (`run --power`, results/energy.ts) reads in tables and notes: the J/token and Avg W cells, each
 * replica's part, and the note under the table naming where the power came from and why a row has no J/token.
 */
import type { StageSummary } from '../metrics/summary.js';
import type { Energy, ReplicaEnergy } from '../results/energy.js';

/** J/token: `invalid` where the readings cannot stand for the window, `—` without energy. */
export function jPerTokenCell(e: Energy | undefined): string {
  if (!e) return '—';
  if (!e.valid) return 'invalid';
  return e.joulesPerOutputToken !== undefined ? e.joulesPerOutputToken.toFixed(3) : '—';
}

/** Avg W: `—` for a window the readings did not cover (its mean would be of the part they covered) or without energy. */
export function avgWattsCell(e: Energy | undefined): string {
  return e && e.valid ? e.avgWatts.toFixed(0) : '—';
}

/** One replica's part, for its line under the table: ", GPU 312 W, 0.412 J/token" (nothing without a part). */
export function replicaEnergyText(e: ReplicaEnergy | undefined): string {
  if (!e) return '';
  if (!e.valid || e.avgWatts === undefined) return ', GPU power —';
  return `, GPU ${e.avgWatts.toFixed(0)} W${e.joulesPerOutputToken !== undefined ? `, ${e.joulesPerOutputToken.toFixed(3)} J/token` : ''}`;
}

const gpuWords = (e: Energy): string => (e.gpus.length ? `GPU ${e.gpus.join(', ')}` : 'total');

/**
 * The note on measured energy: each source read and the rows read from it (a `--resume`d run may have read its parts
 * from different servers), then the rows without J/token, grouped by why.
 */
export function measuredEnergyLine(rows: readonly StageSummary[]): string | undefined {
  const energy = rows.filter((s): s is StageSummary & { energy: Energy } => s.energy !== undefined && s.energy.source !== 'simulator');
  if (energy.length === 0) return undefined;
  const bySource = new Map<string, Array<StageSummary & { energy: Energy }>>();
  for (const s of energy) bySource.set(s.energy.source, [...(bySource.get(s.energy.source) ?? []), s]);
  const sources = bySource.size === 1
    ? `${energy[0]?.energy.source} over each row's window (${gpuWords(energy[0]?.energy as Energy)})`
    : [...bySource.entries()].map(([src, list]) => `${src} (${gpuWords(list[0]?.energy as Energy)}) for ${list.map((s) => s.label).join(', ')}`).join('; ');
  const replicas = energy.some((s) => s.energy.replicas) ? ', each replica\'s GPUs added up (its own part on its replica line)' : '';
  const byReason = new Map<string, string[]>();
  for (const s of energy.filter((x) => !x.energy.valid)) {
    const reason = s.energy.reason ?? 'invalid';
    byReason.set(reason, [...(byReason.get(reason) ?? []), s.label]);
  }
  const invalid = [...byReason.entries()].map(([reason, labels]) => `${labels.length === energy.length && labels.length > 1 ? 'every row' : labels.join(', ')} — ${reason}`);
  return `energy: ${sources}${replicas}; J/token = joules / output tokens in the window${invalid.length ? `; no J/token or Avg W for ${invalid.join('; ')}` : ''}`;
}
