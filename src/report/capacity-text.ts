import type { CapacityProbe, CapacityResult } from '../load/capacity-types.js';
import type { Slo, StageSummary } from '../metrics/summary.js';

/** A load on the run's axis: req/s with two decimals, streams as a whole number. */
export function loadText(load: number, unit: CapacityResult['unit']): string {
  return unit === 'streams' ? `${Math.round(load)} stream${Math.round(load) === 1 ? '' : 's'}` : `${load.toFixed(2)} req/s`;
}

/** "ttft ≤ 300 ms, itl ≤ 50 ms": the per-request limits (each request must meet every one). */
export function sloLimitsText(slo: Slo): string {
  const parts: string[] = [];
  if (slo.ttftMs !== undefined) parts.push(`ttft ≤ ${slo.ttftMs} ms`);
  if (slo.itlMs !== undefined) parts.push(`itl ≤ ${slo.itlMs} ms`);
  if (slo.e2eMs !== undefined) parts.push(`e2e ≤ ${slo.e2eMs} ms`);
  return parts.join(', ') || 'no limit';
}

/** The terms a capacity is measured under; two capacities compare only when all four agree. */
export interface CapacityTerms {
  slo: string;
  attainment: string;
  errorShare: string;
  axis: string;
}

export function capacityTerms(c: CapacityResult): CapacityTerms {
  return {
    slo: sloLimitsText(c.slo),
    attainment: `${c.attainment}% of requests`,
    errorShare: `at most ${Number((c.maxErrorShare * 100).toFixed(3))}% failed`,
    axis: `${c.axis} (${c.unit})`,
  };
}

/**
 * How precise a capacity answer is, as far as the run measured it: the gap from the answer to the first failure (the
 * search's bracket — its step, `±5%`, is only where the bisection stopped), whether a failure below a held load was
 * left unsettled, and whether runs of the same load agreed (`reproducibility`; virtual time repeats exactly).
 */
export function answerPrecision(c: CapacityResult, opts: { predicted?: boolean; short?: boolean } = {}): string {
  const parts: string[] = [];
  if (c.feasibleMax !== null && c.firstBreach !== null) {
    parts.push(c.unit === 'streams'
      ? `${loadText(c.firstBreach, c.unit)} failed`
      : `+${((c.firstBreach / c.feasibleMax - 1) * 100).toFixed(1)}% to the first failure`);
  }
  if (c.settled === false) parts.push('not settled: a lower load failed');
  const r = c.reproducibility;
  if (opts.short) return parts.join('; ');
  if (r) {
    const loads = (n: number): string => `${n} load${n === 1 ? '' : 's'}`;
    parts.push(r.agreed === r.repeatedLoads ? `repeats agreed at ${loads(r.repeatedLoads)}` : `repeats disagreed at ${loads(r.repeatedLoads - r.agreed)}`);
  } else if (opts.predicted) parts.push('virtual time: repeats exactly');
  else if (c.feasibleMax !== null && c.firstBreach !== null) parts.push('no load run twice');
  return parts.join('; ');
}

/**
 * "19.60 req/s (+4.1% to the first failure; no load run twice)", "≥ 40.00 req/s (no load failed)", or
 * "none (even 12.00 req/s failed)". Not the search's step (±5%): that is not the answer's error (precisionMeaning).
 * `short` (a chart legend): the bracket and `not settled` only.
 */
export function capacityCell(c: CapacityResult, opts: { predicted?: boolean; short?: boolean } = {}): string {
  if (c.feasibleMax === null) {
    const lowest = c.probes.reduce((m, p) => Math.min(m, p.load), Number.POSITIVE_INFINITY);
    return Number.isFinite(lowest) ? `none (even ${loadText(lowest, c.unit)} failed)` : 'none (no probe)';
  }
  if (c.firstBreach === null) return `≥ ${loadText(c.feasibleMax, c.unit)} (no load failed)`;
  return `${loadText(c.feasibleMax, c.unit)} (${answerPrecision(c, opts)})`;
}

/** The boundary's label on the chart: where the last pass and the first failure lie. */
export function boundaryLabel(c: CapacityResult): string {
  if (c.feasibleMax === null) return 'even the lowest load failed';
  if (c.firstBreach === null) return `capacity ≥ ${loadText(c.feasibleMax, c.unit)} (no load failed)`;
  return `capacity ${loadText(c.feasibleMax, c.unit)} · first failure ${loadText(c.firstBreach, c.unit)}`;
}

/** A probe's row: `probe.stage` is the row's index, which is its place in `stages` (searched by index for edited files). */
export function probeRow(stages: readonly StageSummary[], p: CapacityProbe): StageSummary | undefined {
  const s = stages[p.stage];
  return s && s.index === p.stage ? s : (stages.find((r) => r.index === p.stage) ?? s);
}
