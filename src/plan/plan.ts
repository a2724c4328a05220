/**
 * The whole plan: search every candidate, rank them, and check the top answer on its own — one replica
 * predicted at its share of the load over a longer row with another seed — so the answer is not just the search's.
 */
import type { StageLimits } from '../load/types.js';
import { capacityScale, describeShape } from './capacity-factor.js';
import { engineOptions } from './space.js';
import { planWorkload, predictAtRate } from './evaluate.js';
import { evaluateRouters, type RouterSettings } from './routers.js';
import { evaluatePdSplits, type PdSettings } from './pd-splits.js';
import type { Lane } from './pool.js';
import { assumedPricesLine, unpricedLine } from './prices.js';
import { rankCandidates } from './rank.js';
import { searchPlan, type SearchInput } from './search.js';
import type { PlanCandidate, PlanObjective, PlanResult, PlanVerification } from './types.js';

export interface PlanInput extends SearchInput {
  meanOutputTokens: number;
  workloadDescription: string;
  /** Workload flags as a `predict` command takes them (for the verification command line). */
  workloadFlags: string;
  /** `--calibration FILE` when the plan ran on calibrated constants (the verification command needs them too). */
  calibrationFlag?: string;
  /** Row limits of the verification (longer than a search probe). */
  verifyLimits: StageLimits;
  /** `--objective`: rank by cost (default) or by energy per output token. */
  objective?: PlanObjective;
  /** `--router`, `--router-candidates`: the routers compared on the cheapest candidates (none: no comparison). */
  routers?: RouterSettings;
  /** `--pd`, `--pd-candidates`: the prefill/decode splits tried on the cheapest candidates (absent: none). */
  pd?: PdSettings;
}

export async function runPlan(input: PlanInput, lanes?: Lane[]): Promise<PlanResult> {
  const started = performance.now();
  const { job } = input;
  const searched = await searchPlan(input, lanes);
  // The cheapest candidates as clusters behind each router (routers.ts), before ranking: they rank by the cheapest.
  const routerComparison = input.routers ? await evaluateRouters(job, searched.candidates, input.routers) : undefined;
  // …and as prefill/decode splits (pd-splits.ts), where their engine disaggregates.
  const pdComparison = input.pd ? await evaluatePdSplits(job, searched.candidates, input.pd) : undefined;
  const candidates = rankCandidates(searched.candidates, { model: job.model, rate: job.rate, meanOutputTokens: input.meanOutputTokens, objective: input.objective ?? 'cost' });
  const top = candidates[0]?.feasible ? candidates[0] : undefined;
  const verification = top ? await verify(input, top) : null;
  const count = (s: PlanCandidate['status']): number => candidates.filter((c) => c.status === s).length;
  const notes: string[] = [];
  const assumed = assumedPricesLine(input.prices);
  if (assumed) notes.push(assumed);
  const unpriced = unpricedLine(input.prices);
  if (unpriced) notes.push(unpriced);
  const scaled = candidates.filter((c) => c.capacityFactor !== undefined);
  if (scaled.length > 0) {
    const list = scaled.map((c) => `${describeShape(c)} × ${+(c.capacityFactor as number).toFixed(3)}`).join(', ');
    notes.push(`measured capacity factors (plan --verify --save-calibration) scale ${scaled.length} candidate${scaled.length === 1 ? '' : 's'}: ${list}; the rest are the simulator's`);
  }
  if (job.kvCacheDtype && job.kvCacheDtype !== 'auto') notes.push(`every candidate has an ${job.kvCacheDtype} KV cache (--kv-cache-dtype ${job.kvCacheDtype}): twice the tokens of a 16-bit one in the same memory`);
  return {
    model: job.model,
    rate: job.rate,
    outputTokensPerS: job.rate * input.meanOutputTokens,
    meanOutputTokens: input.meanOutputTokens,
    workload: input.workloadDescription,
    slo: job.capacity.slo,
    attainment: job.capacity.attainment,
    maxErrorShare: job.capacity.maxErrorShare,
    arrival: job.capacity.arrival,
    prices: { source: priceSource(input), perGpuHour: input.prices.perGpuHour },
    objective: input.objective ?? 'cost',
    candidates,
    counts: {
      total: candidates.length,
      searched: candidates.filter((c) => c.search !== undefined).length,
      feasible: count('feasible'),
      sloUnmet: count('slo-unmet'),
      pruned: count('pruned'),
      skipped: count('skipped'),
      uncertain: count('uncertain'),
    },
    verification,
    ...(routerComparison ? { routerComparison } : {}),
    ...(pdComparison ? { pdComparison } : {}),
    elapsedMs: performance.now() - started,
    threads: searched.threads,
    notes,
  };
}

function priceSource(input: PlanInput): string {
  const { given, assumed } = input.prices;
  if (assumed.length === 0) return 'given';
  return given.length === 0 ? 'assumed' : 'given and assumed';
}

/** Seed of the verification row: not the search's, so the check does not replay the rows the search already saw. */
const VERIFY_SEED_OFFSET = 1;

async function verify(input: PlanInput, top: PlanCandidate): Promise<PlanVerification> {
  const { job } = input;
  const replicas = top.replicas as number;
  // Rounded up to 4 decimals, so the printed command repeats this row exactly (and never asks for less).
  const ratePerReplica = Math.ceil((job.rate / replicas) * 1e4 - 1e-6) / 1e4;
  const seed = job.seed + VERIFY_SEED_OFFSET;
  const shape = { gpu: top.gpu, gpus: top.gpus, quant: top.quant, engine: top.engine };
  // The workload takes the same seed, as `predict --seed` gives it: the printed command repeats this row exactly.
  const workload = planWorkload(job, seed);
  const { point, summary } = await predictAtRate(job, shape, workload, ratePerReplica, { limits: input.verifyLimits, seed });
  const eng = engineOptions(job.model, shape);
  // A measured capacity factor: predictAtRate ran the simulated replica at rate / factor; so does the command.
  const factor = capacityScale(job, shape);
  const simulatedRate = factor === 1 ? ratePerReplica : Math.ceil((ratePerReplica / factor) * 1e4 - 1e-6) / 1e4;
  const flags = [
    'inferbench predict',
    `--engine ${eng.engine} --model ${eng.model} --gpu ${eng.gpu} --gpus ${eng.gpus}`,
    eng.quant ? `--quant ${eng.quant}` : '',
    job.kvCacheDtype ? `--kv-cache-dtype ${job.kvCacheDtype}` : '',
    `--profile ${job.capacity.arrival === 'poisson' ? 'poisson' : 'constant'} --rate ${simulatedRate}`,
    input.workloadFlags,
    `--slo ${sloFlag(job.capacity.slo)}`,
    input.verifyLimits.maxSeconds !== undefined ? `--max-seconds ${input.verifyLimits.maxSeconds}` : '',
    input.verifyLimits.warmupSeconds ? `--warmup ${input.verifyLimits.warmupSeconds}` : '',
    `--seed ${seed}`,
    input.calibrationFlag ?? '',
    factor !== 1 ? `# ${ratePerReplica} req/s on the real deployment ÷ its measured capacity factor ${+factor.toFixed(4)}` : '',
  ];
  return { shape, replicas, ratePerReplica, point, requests: summary.sloAttainment?.of ?? summary.requests.total, command: flags.filter(Boolean).join(' ') };
}

/** `ttft:2000,itl:100` from an Slo. */
export function sloFlag(slo: PlanResult['slo']): string {
  const parts: string[] = [];
  if (slo.ttftMs !== undefined) parts.push(`ttft:${slo.ttftMs}`);
  if (slo.itlMs !== undefined) parts.push(`itl:${slo.itlMs}`);
  if (slo.e2eMs !== undefined) parts.push(`e2e:${slo.e2eMs}`);
  return parts.join(',');
}
