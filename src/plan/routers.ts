/**
 * `plan --router` (issue 34 item 4): the plan sizes independent replicas with perfect balancing; here the cheapest
 * candidates are run as what they would be, one cluster of N replicas behind a router at the whole required load, in
 * virtual time (predict --replicas N --router P: each replica its own KV and prefix cache). With a shared-prefix
 * workload a prefix-aware router keeps each prefix on one replica, so fewer prefills and perhaps fewer replicas.
 * For each router: the fewest replicas that meet the SLO, from the plan's own count down (or up, when it misses).
 */
import type { RouterPolicy } from '../sim/cluster/router.js';
import type { Workload } from '../workload/types.js';
import { describeShape } from './capacity-factor.js';
import { fewestMeeting } from './fewest.js';
import { planWorkload, predictAtRate, sizingTimeScale } from './evaluate.js';
import { cheapestDeployment, costPerMillionTokens } from './rank.js';
import type { SearchedCandidate } from './search.js';
import type { StageSummary } from '../metrics/summary.js';
import type { CandidateShape, LoadPoint, PlanJobSettings, RouterComparison, RouterFigures, RouterOption, RouterTrial } from './types.js';

/** Replicas tried above the plan's own count when that many miss behind a router. */
const MAX_EXTRA = 2;

export interface RouterSettings {
  routers: RouterPolicy[];
  /** The cheapest feasible candidates evaluated (by the plan's own $/hour). */
  candidates: number;
}

/** The figures plan reports for a cluster or a P/D deployment at the required load (routers.ts, pd-splits.ts). */
export function clusterFigures(point: LoadPoint, summary: StageSummary): RouterFigures {
  return {
    attainment: point.attainment,
    ttftMs: summary.metrics.ttftMs?.median ?? null,
    p99TtftMs: point.p99TtftMs,
    p99ItlMs: point.p99ItlMs,
    cacheHitRate: summary.prefixCacheHitRate ?? null,
  };
}

/** One cluster of `replicas` of the shape behind `router` at the job's rate. */
async function trial(job: PlanJobSettings, shape: CandidateShape, workload: Workload, replicas: number, router: RouterPolicy): Promise<RouterTrial> {
  const { point, summary } = await predictAtRate(job, shape, workload, job.rate, { cluster: { replicas, router }, modelTimeScale: sizingTimeScale(job, shape) });
  const sent = summary.replicas?.map((r) => r.sent) ?? [];
  const total = sent.reduce((a, b) => a + b, 0);
  return {
    replicas,
    meetsSlo: point.meetsSlo,
    ...clusterFigures(point, summary),
    busiestShare: total > 0 ? Math.max(...sent) / total : replicas === 1 ? 1 : null,
    ...(point.missed !== undefined ? { missed: point.missed } : {}),
  };
}

/**
 * The fewest replicas behind `router` that meet the SLO: from `start` (the plan's own count), bisected down to 1 when
 * it meets (more replicas never hold less), else up to MAX_EXTRA more. The engine runs at the pessimistic end of the
 * capacity interval the plan's own count is sized on (sizingTimeScale), so the counts compare.
 */
export async function routerOption(job: PlanJobSettings, c: SearchedCandidate, start: number, router: RouterPolicy, workload: Workload): Promise<RouterOption> {
  const { best, tried } = await fewestMeeting(start, MAX_EXTRA, (n) => trial(job, c.shape, workload, n, router));
  const list = [...tried.values()].sort((a, b) => a.replicas - b.replicas);
  const shown = best ?? (list[list.length - 1] as RouterTrial);
  const cost = best ? best.replicas * c.replicaCostPerHour : null;
  return {
    topology: 'replicas',
    router,
    replicas: best?.replicas ?? null,
    meetsSlo: best !== undefined,
    attainment: shown.attainment, ttftMs: shown.ttftMs, p99TtftMs: shown.p99TtftMs, p99ItlMs: shown.p99ItlMs, cacheHitRate: shown.cacheHitRate,
    totalGpus: best ? best.replicas * c.shape.gpus : null,
    costPerHour: cost,
    costPerMillionOutputTokens: cost === null ? null : costPerMillionTokens(cost, job.rate * job.meanOutputTokens),
    tried: list,
  };
}

/** The `n` cheapest candidates that meet the SLO as the plan sized them (its own replicas × the replica's $/hour). */
export function cheapestFeasible(searched: readonly SearchedCandidate[], n: number): SearchedCandidate[] {
  return searched
    .filter((c) => c.evaluated?.atLoad?.meetsSlo && c.evaluated.replicas)
    .sort((a, b) => (a.evaluated?.replicas as number) * a.replicaCostPerHour - (b.evaluated?.replicas as number) * b.replicaCostPerHour || a.index - b.index)
    .slice(0, n);
}

/** The cheapest feasible candidates by the plan's own sizing, each with its routers evaluated (`c.routers`). */
export async function evaluateRouters(job: PlanJobSettings, searched: readonly SearchedCandidate[], settings: RouterSettings): Promise<RouterComparison | undefined> {
  if (settings.routers.length === 0 || settings.candidates <= 0) return undefined;
  const started = performance.now();
  const feasible = cheapestFeasible(searched, settings.candidates);
  const workload = planWorkload(job);
  const lines: string[] = [];
  let best: RouterComparison['best'] = null;
  for (const c of feasible) {
    const start = c.evaluated?.replicas as number;
    c.routers = [];
    for (const router of settings.routers) c.routers.push(await routerOption(job, c, start, router, workload));
    lines.push(...comparisonLines(job, c, start));
    const d = cheapestDeployment(c, job);
    if (d && d.router !== null && (!best || d.costPerHour < best.costPerHour - 1e-9)) best = { ...c.shape, ...d };
  }
  return {
    routers: settings.routers,
    candidates: feasible.length,
    prefix: job.workload.prefix ?? null,
    elapsedMs: performance.now() - started,
    lines,
    best,
  };
}

const pct = (x: number | null): string => (x === null ? '—' : `${(x * 100).toFixed(1)}%`);
const ms = (x: number | null): string => (x === null ? '—' : `${x.toFixed(0)} ms`);

/** `prefix-aware holds 12 req/s on 3 replicas where round-robin needs 4: −25% $/h ($7.47 vs $9.96/h)`, per router. */
function comparisonLines(job: PlanJobSettings, c: SearchedCandidate, start: number): string[] {
  const rs = c.routers ?? [];
  const rr = rs.find((r) => r.router === 'round-robin' && r.meetsSlo);
  const base = rr ? { name: 'round-robin', replicas: rr.replicas as number, cost: rr.costPerHour as number } : { name: 'the plan\'s independent replicas', replicas: start, cost: start * c.replicaCostPerHour };
  const rate = `${+job.rate.toFixed(2)} req/s`;
  const out: string[] = [];
  for (const r of rs) {
    if (rr && r === rr) continue;
    if (!r.meetsSlo || r.replicas === null) {
      out.push(`${describeShape(c.shape)}: ${r.router} misses the SLO at ${rate} on ${r.tried.map((t) => t.replicas).join(', ')} replicas (${r.tried[r.tried.length - 1]?.missed ?? 'missed'})`);
      continue;
    }
    const d = (r.costPerHour as number) / base.cost - 1;
    const change = Math.abs(d) < 1e-9 ? 'the same $/h' : `${d < 0 ? '−' : '+'}${Math.abs(d * 100).toFixed(0)}% $/h ($${(r.costPerHour as number).toFixed(2)} vs $${base.cost.toFixed(2)}/h)`;
    const figures = rr ? `; cache hit ${pct(r.cacheHitRate)} vs ${pct(rr.cacheHitRate)}, TTFT p50 ${ms(r.ttftMs)} vs ${ms(rr.ttftMs)}` : `; cache hit ${pct(r.cacheHitRate)}, TTFT p50 ${ms(r.ttftMs)}`;
    out.push(`${describeShape(c.shape)}: ${r.router} holds ${rate} on ${r.replicas} replica${r.replicas === 1 ? '' : 's'} where ${base.name} needs ${base.replicas}: ${change}${figures}`);
  }
  return out;
}
