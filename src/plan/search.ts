/**
 * `inferbench plan`'s search: enumerate the space, drop what cannot run (with reasons), search the capacity of
 * the rest on every core, cheapest replica first, and prune what provably cannot be the cheapest answer.
 */
import type { SimEngineDescription } from '../sim/create.js';
import type { RequestShape } from '../sim/limits.js';
import { openLanes, type Lane } from './pool.js';
import type { PriceTable } from './prices.js';
import { checkShape, enumerateShapes, jobEngineExtras, type SpaceAxes } from './space.js';
import type { CandidateShape, EvaluatedCapacity, PdColocated, PdOption, PlanJobSettings, RouterOption } from './types.js';

export interface SearchInput {
  job: PlanJobSettings;
  axes: SpaceAxes;
  prices: PriceTable;
  /** Lanes: the main thread plus threads − 1 workers. */
  threads: number;
  /** Skip candidates whose single replica already costs more than the cheapest answer found (default on). */
  prune: boolean;
  /** The longest request of the workload: a shape whose context cannot hold it is skipped. */
  longest: RequestShape;
}

/** One candidate as the search leaves it (ranking and costs come after, in rank.ts). */
export interface SearchedCandidate {
  /** Position in the enumeration (GPU, TP, quant, engine order). */
  index: number;
  shape: CandidateShape;
  gpuHourPrice: number;
  /** $ per hour for one replica. */
  replicaCostPerHour: number;
  /** Why it cannot run at all (skipped). */
  skipped?: string;
  /** Why it was not searched (a single replica costs more than a cheaper feasible answer found). */
  pruned?: string;
  description?: SimEngineDescription;
  evaluated?: EvaluatedCapacity;
  /** The shape's replicas as a cluster behind each router (routers.ts), for the cheapest few candidates. */
  routers?: RouterOption[];
  /** The shape as prefill/decode splits (pd-splits.ts), for the cheapest few candidates whose engine disaggregates. */
  pd?: PdOption[];
  pdColocated?: PdColocated;
}

export interface SearchOutput {
  candidates: SearchedCandidate[];
  threads: number;
}

const money = (usd: number): string => `$${usd.toFixed(2)}`;

/** A feasible result's total $/hour, when it met the SLO at its operating point. */
export function feasibleCost(c: SearchedCandidate): number | undefined {
  const e = c.evaluated;
  if (!e || e.capacityPerReplica === null || !e.replicas || !e.atLoad?.meetsSlo) return undefined;
  return e.replicas * c.replicaCostPerHour;
}

export async function searchPlan(input: SearchInput, lanesOverride?: Lane[]): Promise<SearchOutput> {
  const { job, axes, prices } = input;
  const extra = jobEngineExtras(job);
  const candidates: SearchedCandidate[] = enumerateShapes(axes).map((shape, index) => {
    const price = prices.perGpuHour[shape.gpu] as number;
    const c: SearchedCandidate = { index, shape, gpuHourPrice: price, replicaCostPerHour: price * shape.gpus };
    const fit = checkShape(job.model, shape, input.longest, extra);
    if (fit.ok) c.description = fit.resolved.description;
    else c.skipped = fit.reason;
    return c;
  });
  // Cheapest replica first: the first feasible answers bound the rest early.
  const queue = candidates.filter((c) => !c.skipped).sort((a, b) => a.replicaCostPerHour - b.replicaCostPerHour || a.index - b.index);
  let best: SearchedCandidate | undefined;
  let bestCost = Number.POSITIVE_INFINITY;
  let next = 0;
  const take = (): SearchedCandidate | undefined => {
    while (next < queue.length) {
      const c = queue[next++] as SearchedCandidate;
      // Strictly more: a replica that costs exactly the best total could tie it, so it is still searched.
      if (input.prune && best && c.replicaCostPerHour > bestCost + 1e-9) {
        const s = best.shape;
        c.pruned = `one replica costs ${money(c.replicaCostPerHour)}/h, more than the cheapest deployment found (${money(bestCost)}/h: ${best.evaluated?.replicas}× ${s.gpus}× ${s.gpu} ${s.quant} ${s.engine}); --exhaustive searches it anyway`;
        continue;
      }
      return c;
    }
    return undefined;
  };
  const opening = lanesOverride ? lanesOverride.map((l) => Promise.resolve(l)) : openLanes(job, Math.max(1, Math.min(input.threads, queue.length)));
  const slot = async (lane: Lane): Promise<void> => {
    for (let c = take(); c; c = take()) {
      c.evaluated = await lane.evaluate(c.shape);
      const cost = feasibleCost(c);
      if (cost !== undefined && (cost < bestCost || (cost === bestCost && best && c.index < best.index))) {
        bestCost = cost;
        best = c;
      }
    }
  };
  // Each lane starts taking candidates as soon as it is up; a worker that fails to start fails the plan.
  const settled = await Promise.allSettled(opening.map(async (p) => {
    const lane = await p;
    try {
      await Promise.all(Array.from({ length: lane.depth }, () => slot(lane)));
    } finally {
      if (!lanesOverride) await lane.close();
    }
  }));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return { candidates, threads: opening.length };
}
