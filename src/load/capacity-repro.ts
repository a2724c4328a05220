import type { CapacityProbe, CapacityReproducibility, CapacitySettings } from './capacity-types.js';

/** One run's outcome as the reproducibility line names it. */
function outcome(p: CapacityProbe): string {
  if (p.pass) return 'pass';
  return p.overSaturated !== undefined ? 'fail: did not keep up' : 'fail';
}

/**
 * How reproducible the answer is, from the loads the search ran more than once (ambiguous probes and unsettled
 * contradictions): whether the runs of each such load reached the same pass/fail. Runs that disagree at a load mean
 * that another search can land on either side of it. Undefined when no load was run twice.
 */
export function reproducibilityOf(probes: readonly CapacityProbe[], settings: Pick<CapacitySettings, 'axis'>, formatLoad: (n: number) => string): CapacityReproducibility | undefined {
  const byLoad = new Map<number, CapacityProbe[]>();
  for (const p of [...probes].sort((a, b) => a.stage - b.stage)) byLoad.set(p.load, [...(byLoad.get(p.load) ?? []), p]);
  const loads = [...byLoad.entries()]
    .filter(([, runs]) => runs.length > 1)
    .sort(([a], [b]) => a - b)
    .map(([load, runs]) => ({ load, outcomes: runs.map(outcome) }));
  if (loads.length === 0) return undefined;
  const agrees = (o: string[]): boolean => o.every((x) => (x === 'pass') === (o[0] === 'pass'));
  const agreed = loads.filter((l) => agrees(l.outcomes));
  const split = loads.filter((l) => !agrees(l.outcomes));
  const unit = settings.axis === 'rate' ? ' req/s' : ' streams';
  const list = (ls: typeof loads): string => ls.map((l) => `${formatLoad(l.load)}${unit} (${l.outcomes.join(', ')})`).join('; ');
  const text =
    split.length === 0
      ? `reproducibility: the runs of every load run more than once agreed on pass/fail: ${list(agreed)}`
      : `reproducibility: runs of the same load disagreed at ${list(split)} — another search can land on either side of ${split.length === 1 ? 'that load' : 'those loads'}` +
        (agreed.length > 0 ? `; they agreed at ${list(agreed)}` : '');
  return { repeatedLoads: loads.length, agreed: agreed.length, loads, text };
}
