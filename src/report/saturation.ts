import type { StageSummary } from '../metrics/summary.js';

/**
 * Whether a run pushed its server to its ceiling, decided from the rows themselves. Only then is its top
 * output rate a capacity ("at saturation"); otherwise it is the rate at the highest load that was tried,
 * and the server may well do more.
 *
 * Evidence, any of:
 *  - a throughput (burst) row completed requests: it offers everything at once;
 *  - an open-loop row fell under 90% of its target rate (belowTarget), or was stopped as over-saturated: the server
 *    could not keep up;
 *  - closed-loop rows: the request rate barely follows the concurrency any more — between two rows it grew
 *    by less than a fifth of the concurrency's growth (4× the streams for < +60% requests/s): the curve is flat.
 */
export interface SaturationEvidence {
  saturated: boolean;
  /** One phrase: why it saturated, or why it cannot be told. */
  why: string;
}

/** Relative rate gain per relative load gain below which the curve counts as flat. */
const FLAT_ELASTICITY = 0.2;

export function saturationOf(stages: readonly StageSummary[]): SaturationEvidence {
  const ok = stages.filter((s) => s.requests.ok > 0);
  const burst = ok.find((s) => s.kind === 'burst');
  if (burst) return { saturated: true, why: `its ${burst.label} row sent every request at once` };
  const behind = ok.find((s) => s.belowTarget);
  if (behind) return { saturated: true, why: `its ${behind.label} row fell behind its target rate` };
  // A capacity probe stopped as over-saturated may have no success inside its (never opened) window.
  const stopped = stages.find((s) => s.overSaturated !== undefined);
  if (stopped) return { saturated: true, why: `its ${stopped.label} row was stopped as over-saturated` };
  const closed = ok.filter((s) => s.kind === 'closed' && s.concurrency !== undefined).sort((a, b) => (a.concurrency as number) - (b.concurrency as number));
  for (let i = 1; i < closed.length; i++) {
    const lo = closed[i - 1] as StageSummary;
    const hi = closed[i] as StageSummary;
    const loadGain = (hi.concurrency as number) / (lo.concurrency as number) - 1;
    const rateGain = lo.requestThroughput > 0 ? hi.requestThroughput / lo.requestThroughput - 1 : Number.POSITIVE_INFINITY;
    if (loadGain > 0 && rateGain < FLAT_ELASTICITY * loadGain) {
      const pct = `${rateGain >= 0 ? '+' : ''}${(rateGain * 100).toFixed(0)}%`;
      return { saturated: true, why: `its request rate barely grew from ${lo.label} to ${hi.label} (${pct} for ${(loadGain + 1).toFixed(1)}× the streams)` };
    }
  }
  const grew = closed.length >= 2 ? ', and the request rate kept growing with the streams' : '';
  return { saturated: false, why: `no throughput row, no row behind its target rate${grew}` };
}
