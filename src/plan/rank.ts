/**
 * From searched candidates to the plan's rows: replicas, GPUs, $/hour and $ per 1M output tokens at the required
 * load, in ranked order — feasible ones cheapest first, then those that cannot meet the SLO, those pruned, and
 * those that cannot run at all.
 */
import { launchCommand } from './launch.js';
import { feasibleCost, type SearchedCandidate } from './search.js';
import type { PlanCandidate, PlanDeployment, PlanJobSettings, PlanObjective } from './types.js';

export interface RankContext {
  model: string;
  /** Required load, requests per second. */
  rate: number;
  meanOutputTokens: number;
  /** Feasible candidates ranked by cost (default) or by energy per output token. */
  objective?: PlanObjective;
}

/** USD per 1M output tokens when every GPU is billed for every hour and the deployment serves `outputTokensPerS`. */
export function costPerMillionTokens(costPerHour: number, outputTokensPerS: number): number {
  return (costPerHour / (outputTokensPerS * 3600)) * 1e6;
}

/**
 * What a candidate is ranked by: the cheapest option that meets the SLO — a router's cluster where routers were
 * evaluated (else the plan's own sizing), or a prefill/decode split where splits were (plan --pd) — the first given at
 * equal cost. Undefined for an infeasible candidate.
 */
export function cheapestDeployment(c: SearchedCandidate, job: Pick<PlanJobSettings, 'rate' | 'meanOutputTokens'>): PlanDeployment | undefined {
  const tokensPerS = job.rate * job.meanOutputTokens;
  const options: PlanDeployment[] = [];
  for (const r of c.routers ?? []) {
    if (r.meetsSlo && r.replicas !== null) options.push({ topology: 'replicas', router: r.router, replicas: r.replicas, totalGpus: r.totalGpus as number, costPerHour: r.costPerHour as number, costPerMillionOutputTokens: r.costPerMillionOutputTokens as number });
  }
  const e = c.evaluated;
  const sized = e?.replicas && e.atLoad?.meetsSlo && e.capacityPerReplica !== null ? e.replicas : undefined;
  // Behind a router is how replicas really run: where routers were evaluated and one met the SLO, the plan's perfectly
  // balanced count is not an option; otherwise it is (a P/D split must beat it to rank by it).
  if (options.length === 0 && sized !== undefined) {
    const cost = sized * c.replicaCostPerHour;
    options.push({ topology: 'replicas', router: null, replicas: sized, totalGpus: sized * c.shape.gpus, costPerHour: cost, costPerMillionOutputTokens: costPerMillionTokens(cost, tokensPerS) });
  }
  for (const o of c.pd ?? []) {
    if (o.meetsSlo && o.prefill !== null && o.decode !== null) {
      options.push({ topology: 'pd', router: null, replicas: o.prefill + o.decode, prefill: o.prefill, decode: o.decode, split: o.split, totalGpus: o.totalGpus as number, costPerHour: o.costPerHour as number, costPerMillionOutputTokens: o.costPerMillionOutputTokens as number });
    }
  }
  // Cheapest first; at equal cost the first given (routers before splits, each in the order asked for).
  return options.length > 0 ? options.reduce((a, b) => (b.costPerHour < a.costPerHour - 1e-9 ? b : a)) : undefined;
}

const STATUS_ORDER = { feasible: 0, uncertain: 1, 'slo-unmet': 2, pruned: 3, skipped: 4 } as const;

export function rankCandidates(searched: readonly SearchedCandidate[], ctx: RankContext): PlanCandidate[] {
  const outputTokensPerS = ctx.rate * ctx.meanOutputTokens;
  const rows = searched.map((c) => ({ c, row: toRow(c, ctx, outputTokensPerS) }));
  rows.sort((a, b) => {
    const s = STATUS_ORDER[a.row.status] - STATUS_ORDER[b.row.status];
    if (s !== 0) return s;
    if (a.row.status === 'feasible' && ctx.objective === 'energy') {
      // Least energy per output token first (a GPU without power figures last), then the cost order below.
      const ja = a.row.joulesPerOutputToken ?? Infinity;
      const jb = b.row.joulesPerOutputToken ?? Infinity;
      if (ja !== jb && Math.abs(ja - jb) > 1e-9 * Math.max(1, Math.abs(ja))) return ja < jb ? -1 : 1;
    }
    if (a.row.status === 'feasible') {
      // Cheapest first — by the cheapest deployment that meets the SLO, a router's cluster where routers were
      // evaluated (routers.ts) —; at equal cost fewer GPUs, then more headroom over the load, then enumeration order.
      const cost = rankCost(a.row) - rankCost(b.row);
      if (Math.abs(cost) > 1e-9) return cost;
      const gpus = (a.row.deployment?.totalGpus ?? (a.row.totalGpus as number)) - (b.row.deployment?.totalGpus ?? (b.row.totalGpus as number));
      if (gpus !== 0) return gpus;
      const head = headroom(b.row) - headroom(a.row);
      if (Math.abs(head) > 1e-9) return head;
    } else if (a.row.status !== 'skipped') {
      const cost = a.c.replicaCostPerHour - b.c.replicaCostPerHour;
      if (Math.abs(cost) > 1e-9) return cost;
    }
    return a.c.index - b.c.index;
  });
  let rank = 0;
  return rows.map(({ row }) => (row.status === 'feasible' ? { rank: ++rank, ...row } : row));
}

/** Even one request at a time missed: say what one request sees against the limits. */
function noCapacityReason(e: NonNullable<SearchedCandidate['evaluated']>): string {
  const l = e.lowest;
  if (!l) return 'no load met the SLO';
  const figures = [l.p99TtftMs !== null && `TTFT p99 ${l.p99TtftMs.toFixed(0)} ms`, l.p99ItlMs !== null && `ITL p99 ${l.p99ItlMs.toFixed(1)} ms`].filter(Boolean).join(', ');
  return `even one request at a time misses the SLO: ${l.missed ?? ''}${figures ? ` (${figures})` : ''}`;
}

function rankCost(r: PlanCandidate): number {
  return r.deployment?.costPerHour ?? (r.costPerHour as number);
}

function headroom(r: PlanCandidate): number {
  return (r.capacityPerReplica ?? 0) * (r.replicas ?? 0);
}

function toRow(c: SearchedCandidate, ctx: RankContext, outputTokensPerS: number): PlanCandidate {
  const e = c.evaluated;
  const base: PlanCandidate = {
    ...c.shape,
    feasible: false,
    status: 'skipped',
    reason: null,
    gpuHourPrice: c.gpuHourPrice,
    capacityPerReplica: e?.capacityPerReplica ?? null,
    replicas: null,
    totalGpus: null,
    costPerHour: null,
    costPerMillionOutputTokens: null,
    tokensPerSecondPerGpu: null,
    tokensPerSecondPerUser: null,
    joulesPerOutputToken: null,
    ...(e?.atLoad ? { atLoad: e.atLoad } : {}),
    ...(e?.atCapacity ? { atCapacity: e.atCapacity } : {}),
    ...(e?.capacityFactor !== undefined ? { capacityFactor: e.capacityFactor } : {}),
    ...(e ? { search: { probes: e.probes, verdict: e.verdict, firstBreach: e.firstBreach, elapsedMs: Math.round(e.elapsedMs) } } : {}),
    ...(e?.capacityInterval ? { capacityInterval: e.capacityInterval } : {}),
    ...(e?.replicasOptimistic !== undefined ? { replicasOptimistic: e.replicasOptimistic } : {}),
    ...(e?.replicasAtPrediction !== undefined ? { replicasAtPrediction: e.replicasAtPrediction } : {}),
    ...(c.routers ? { routers: c.routers } : {}),
    ...(c.pd ? { pd: c.pd } : {}),
    ...(c.pdColocated ? { pdColocated: c.pdColocated } : {}),
  };
  if (c.skipped !== undefined) return { ...base, status: 'skipped', reason: c.skipped };
  if (c.pruned !== undefined) return { ...base, status: 'pruned', reason: c.pruned };
  if (!e) return { ...base, status: 'skipped', reason: 'not searched' };
  // The capacity interval straddles the SLO: neither feasible nor not, listed apart to be measured (plan --verify).
  if (e.uncertain !== undefined) return { ...base, status: 'uncertain', reason: `uncertain — measure it: ${e.uncertain}`, uncertain: e.uncertain };
  const cost = feasibleCost(c);
  if (cost === undefined || !e.replicas) {
    const reason = e.capacityPerReplica === null ? noCapacityReason(e) : `one replica holds ${e.capacityPerReplica.toFixed(2)} req/s, but at its share of the load (${e.atLoad?.ratePerReplica.toFixed(2)} req/s on each of ${e.replicas} replicas) it missed the SLO: ${e.atLoad?.missed ?? 'unknown'}`;
    return { ...base, status: 'slo-unmet', reason };
  }
  const totalGpus = e.replicas * c.shape.gpus;
  return {
    ...base,
    feasible: true,
    status: 'feasible',
    replicas: e.replicas,
    totalGpus,
    costPerHour: cost,
    costPerMillionOutputTokens: costPerMillionTokens(cost, outputTokensPerS),
    tokensPerSecondPerGpu: outputTokensPerS / totalGpus,
    tokensPerSecondPerUser: e.atLoad?.outputTokensPerSPerUser ?? null,
    joulesPerOutputToken: e.atLoad?.joulesPerOutputToken ?? null,
    ...(c.description ? { launch: launchCommand(ctx.model, c.shape, c.description) } : {}),
    ...(c.routers || c.pd ? { deployment: cheapestDeployment(c, ctx) as NonNullable<ReturnType<typeof cheapestDeployment>> } : {}),
  };
}
