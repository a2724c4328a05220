/**
 * Re-ranking by what was measured: each measured candidate needs ⌈required rate / measured capacity⌉ replicas, which
 * cost what they cost; the cheapest measured deployment ranks first (at equal cost, more measured capacity), as the
 * plan ranks its predictions. Candidates not measured follow in plan order.
 */
import { replicasFor } from '../plan/evaluate.js';
import type { PlanResult } from '../plan/types.js';
import type { VerificationEntry } from './types.js';

export function measuredRanking(entries: readonly VerificationEntry[], plan: Pick<PlanResult, 'rate'>): VerificationEntry[] {
  const withCost = entries.map((e) => {
    if (e.measuredCapacity === null || e.measuredCapacity <= 0) return { ...e };
    const measuredReplicas = replicasFor(plan.rate, e.measuredCapacity);
    return { ...e, measuredReplicas, measuredCostPerHour: measuredReplicas * e.candidate.gpus * e.candidate.gpuHourPrice };
  });
  const measured = withCost
    .filter((e) => e.measuredCostPerHour !== undefined)
    .sort((a, b) => (a.measuredCostPerHour as number) - (b.measuredCostPerHour as number) || (b.measuredCapacity as number) - (a.measuredCapacity as number) || a.candidate.planRank - b.candidate.planRank);
  const rest = withCost.filter((e) => e.measuredCostPerHour === undefined).sort((a, b) => a.candidate.planRank - b.candidate.planRank);
  return [...measured.map((e, i) => ({ ...e, measuredRank: i + 1 })), ...rest];
}
