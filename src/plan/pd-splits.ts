/**
 * `plan --pd` (issue 34 item 4): the cheapest candidates as prefill/decode disaggregated deployments — P prefill and D
 * decode engines of the shape, the KV moved between them over the GPU's link (sim/cluster/pd.ts) — at the whole
 * required load in virtual time, beside the plan's colocated replicas. For each split ratio P:D, the fewest copies m of
 * it (m·P prefill + m·D decode engines) that meet the SLO; its cost against the plan's own sizing says where
 * disaggregation wins and by how much.
 */
import type { Workload } from '../workload/types.js';
import { describeShape } from './capacity-factor.js';
import { fewestMeeting } from './fewest.js';
import { planWorkload, predictAtRate, sizingTimeScale } from './evaluate.js';
import { cheapestDeployment, costPerMillionTokens } from './rank.js';
import { cheapestFeasible, clusterFigures } from './routers.js';
import type { SearchedCandidate } from './search.js';
import type { CandidateShape, PdColocated, PdComparison, PdOption, PdTrial, PlanJobSettings } from './types.js';

/**
 * Engines whose servers run prefill/decode disaggregation: vLLM V1 (KV connectors: NixlConnector, LMCache, P2P NCCL),
 * SGLang (--disaggregation-mode prefill|decode over Mooncake/NIXL), TensorRT-LLM (trtllm-serve disaggregated, the
 * Triton profile's engine). TGI, lmdeploy's TurboMind (its P/D runs on the PyTorch engine only), the V0/legacy vLLM
 * profiles and the single-box servers (llama.cpp, Ollama, MLC) do not.
 */
export const PD_ENGINES: readonly string[] = ['vllm', 'sglang', 'triton', 'trtllm'];

/** Split ratios tried by default: one decode engine per prefill engine, two, three, and a prefill-heavy one. */
export const DEFAULT_PD_RATIOS: ReadonlyArray<{ prefill: number; decode: number }> = [
  { prefill: 1, decode: 1 }, { prefill: 1, decode: 2 }, { prefill: 1, decode: 3 }, { prefill: 2, decode: 1 },
];

/** Engines tried above the plan's own GPU count (in engines) when a split misses there. */
const MAX_EXTRA_ENGINES = 2;

export interface PdSettings {
  /** Ratios P:D; each is scaled by the fewest copies that meet the SLO. */
  ratios: ReadonlyArray<{ prefill: number; decode: number }>;
  /** The cheapest feasible candidates (by the plan's own $/hour) evaluated. */
  candidates: number;
}

export const ratioLabel = (r: { prefill: number; decode: number }): string => `${r.prefill}:${r.decode}`;

/** m copies of the ratio at the job's rate. */
async function trial(job: PlanJobSettings, shape: CandidateShape, workload: Workload, ratio: { prefill: number; decode: number }, m: number): Promise<PdTrial> {
  const prefill = ratio.prefill * m;
  const decode = ratio.decode * m;
  const { point, summary } = await predictAtRate(job, shape, workload, job.rate, { pd: { prefill, decode }, modelTimeScale: sizingTimeScale(job, shape) });
  return {
    prefill,
    decode,
    meetsSlo: point.meetsSlo,
    ...clusterFigures(point, summary),
    itlMs: summary.metrics.itlMs?.median ?? null,
    ...(point.missed !== undefined ? { missed: point.missed } : {}),
  };
}

/**
 * The fewest copies of `ratio` that meet the SLO, searched over 1…⌊(plan's engines + MAX_EXTRA_ENGINES) / (P + D)⌋
 * (more engines never hold less): bisected when the largest meets it. The engine runs at the pessimistic end of the
 * capacity interval the plan's own count is sized on (sizingTimeScale), so the two compare.
 */
export async function pdOption(job: PlanJobSettings, c: SearchedCandidate, colocated: number, ratio: { prefill: number; decode: number }, workload: Workload): Promise<PdOption> {
  const size = ratio.prefill + ratio.decode;
  const most = Math.max(1, Math.floor((colocated + MAX_EXTRA_ENGINES) / size));
  const { best, tried } = await fewestMeeting(most, 0, (m) => trial(job, c.shape, workload, ratio, m));
  const list = [...tried.values()].sort((a, b) => a.prefill + a.decode - (b.prefill + b.decode));
  const shown = best ?? (list[list.length - 1] as PdTrial);
  const engines = best ? best.prefill + best.decode : null;
  const cost = engines !== null ? engines * c.replicaCostPerHour : null;
  return {
    topology: 'pd',
    split: ratioLabel(ratio),
    prefill: best?.prefill ?? null,
    decode: best?.decode ?? null,
    meetsSlo: best !== undefined,
    attainment: shown.attainment, ttftMs: shown.ttftMs, p99TtftMs: shown.p99TtftMs, itlMs: shown.itlMs, p99ItlMs: shown.p99ItlMs, cacheHitRate: shown.cacheHitRate,
    totalGpus: engines !== null ? engines * c.shape.gpus : null,
    costPerHour: cost,
    costPerMillionOutputTokens: cost === null ? null : costPerMillionTokens(cost, job.rate * job.meanOutputTokens),
    tried: list,
  };
}

/**
 * The colocated replicas as they would run beside a split: the plan's count behind a least-load balancer, at the same
 * engine time (a plan's own operating point is one replica at its share, at the point prediction's time).
 */
async function colocatedBaseline(job: PlanJobSettings, shape: CandidateShape, workload: Workload, replicas: number): Promise<PdColocated> {
  const opts = { modelTimeScale: sizingTimeScale(job, shape), ...(replicas > 1 ? { cluster: { replicas, router: 'least-load' as const } } : {}) };
  const { point, summary } = await predictAtRate(job, shape, workload, job.rate, opts);
  return { replicas, meetsSlo: point.meetsSlo, ...clusterFigures(point, summary), itlMs: summary.metrics.itlMs?.median ?? null };
}

/** The cheapest feasible candidates whose engine disaggregates, each with its splits evaluated (`c.pd`). */
export async function evaluatePdSplits(job: PlanJobSettings, searched: readonly SearchedCandidate[], settings: PdSettings): Promise<PdComparison | undefined> {
  if (settings.ratios.length === 0 || settings.candidates <= 0) return undefined;
  const started = performance.now();
  const chosen = cheapestFeasible(searched.filter((c) => PD_ENGINES.includes(c.shape.engine)), settings.candidates);
  const workload = planWorkload(job);
  const lines: string[] = [];
  let best: PdComparison['best'] = null;
  for (const c of chosen) {
    const colocated = c.evaluated?.replicas as number;
    c.pdColocated = await colocatedBaseline(job, c.shape, workload, colocated);
    c.pd = [];
    // A ratio of more engines than the colocated count and the extra allowed can only cost more: not tried.
    for (const ratio of settings.ratios) if (ratio.prefill + ratio.decode <= colocated + MAX_EXTRA_ENGINES) c.pd.push(await pdOption(job, c, colocated, ratio, workload));
    lines.push(...comparisonLines(job, c, colocated));
    const d = cheapestDeployment(c, job);
    if (d && d.topology === 'pd' && (!best || d.costPerHour < best.costPerHour - 1e-9)) best = { ...c.shape, ...d };
  }
  return {
    splits: settings.ratios.map(ratioLabel),
    candidates: chosen.length,
    engines: [...PD_ENGINES],
    elapsedMs: performance.now() - started,
    lines,
    best,
  };
}

const ms = (x: number | null, digits = 0): string => (x === null ? '—' : `${x.toFixed(digits)} ms`);

/**
 * One line per candidate: its cheapest split that meets the SLO against the colocated replicas (`P/D 1:1 holds 20 req/s
 * on 10 engines (5 prefill + 5 decode) where colocated replicas need 12: −17% $/h …`), or why none did.
 */
function comparisonLines(job: PlanJobSettings, c: SearchedCandidate, colocated: number): string[] {
  const rate = `${+job.rate.toFixed(2)} req/s`;
  const options = c.pd ?? [];
  if (options.length === 0) return [];
  const met = options.filter((o) => o.meetsSlo && o.costPerHour !== null);
  if (met.length === 0) {
    // Why the largest deployment of each split missed (the per-split lines list every size tried).
    const why = options.map((o) => `${o.split}: ${o.tried[o.tried.length - 1]?.missed ?? 'missed'}`).join('; ');
    return [`${describeShape(c.shape)}: no split meets the SLO at ${rate} within ${colocated + MAX_EXTRA_ENGINES} engines (${why})`];
  }
  const o = met.reduce((a, b) => ((b.costPerHour as number) < (a.costPerHour as number) - 1e-9 ? b : a));
  const baseCost = colocated * c.replicaCostPerHour;
  const d = (o.costPerHour as number) / baseCost - 1;
  const change = Math.abs(d) < 1e-9 ? 'the same $/h' : `${d < 0 ? '−' : '+'}${Math.abs(d * 100).toFixed(0)}% $/h ($${(o.costPerHour as number).toFixed(2)} vs $${baseCost.toFixed(2)}/h)`;
  const at = c.pdColocated;
  const figures = at ? `; TTFT p99 ${ms(o.p99TtftMs)} vs ${ms(at.p99TtftMs)}, ITL p99 ${ms(o.p99ItlMs, 1)} vs ${ms(at.p99ItlMs, 1)}` : '';
  const engines = (o.prefill as number) + (o.decode as number);
  return [`${describeShape(c.shape)}: P/D ${o.split} holds ${rate} on ${engines} engines (${o.prefill} prefill + ${o.decode} decode) where colocated replicas need ${colocated}: ${change}${figures}`];
}
