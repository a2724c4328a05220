/**
 * One candidate, searched in virtual time: the capacity of one replica under the SLO (the same search as
 * `predict --profile capacity`), the replicas the required load needs, and one replica predicted at its share
 * of that load (the operating point). Runs on the main thread or in a worker; inputs and output are plain data.
 */
import { runBenchmark } from '../load/benchmark.js';
import type { CapacitySettings } from '../load/capacity-types.js';
import type { StageSummary } from '../metrics/summary.js';
import { predictCapacity } from '../sim/capacity.js';
import { createVirtualStageRunner } from '../sim/virtual-runner.js';
import type { PdSplit } from '../sim/cluster/pd.js';
import { createLengthsWorkload } from '../workload/synthetic.js';
import type { Workload } from '../workload/types.js';
import { capacityScale } from './capacity-factor.js';
import { engineOptions, jobEngineExtras } from './space.js';
import type { CandidateShape, CapacityInterval, EvaluatedCapacity, LoadPoint, PlanJobSettings } from './types.js';
import { capacityTimeScales, DEFAULT_INTERVAL_LEVEL, intervalBasis } from '../sim/calibrate/predict-intervals.js';
import type { RouterPolicy } from '../sim/cluster/router.js';

/** Replicas added at most when the operating point misses the SLO the capacity search said it meets. */
const MAX_EXTRA_REPLICAS = 2;

/** Replicas needed for a load: the rate split evenly, none above what one replica holds. */
export function replicasFor(rate: number, capacityPerReplica: number): number {
  // A hair of tolerance so that 5 req/s over replicas of exactly 2.5 req/s is 2 replicas, not 3.
  return Math.max(1, Math.ceil(rate / capacityPerReplica - 1e-9));
}

export function planWorkload(job: PlanJobSettings, seed = job.workload.seed): Workload {
  return createLengthsWorkload(job.workload.prompt, job.workload.output, seed, undefined, job.workload.prefix);
}

/**
 * The engine-time factor of the pessimistic end of the capacity interval (what replicas are sized on), 1 without
 * intervals: a cluster behind a router (routers.ts) runs at it, so its replica count compares with the plan's.
 */
export function sizingTimeScale(job: PlanJobSettings, shape: CandidateShape): number {
  const basis = intervalBasis(engineOptions(job.model, shape, jobEngineExtras(job)), job.intervalLevel ?? DEFAULT_INTERVAL_LEVEL);
  return (basis ? capacityTimeScales(basis)?.slow : undefined) ?? 1;
}

/**
 * The capacity's interval (--interval-level, default 80%): the same search with the engine's time at the ends of the
 * ITL interval under load (predict-intervals.ts); undefined with --interval-level 0.
 */
async function capacityIntervalOf(job: PlanJobSettings, engine: ReturnType<typeof engineOptions>, workload: Workload): Promise<CapacityInterval | undefined> {
  const basis = intervalBasis(engine, job.intervalLevel ?? DEFAULT_INTERVAL_LEVEL);
  const scales = basis ? capacityTimeScales(basis) : undefined;
  if (!basis || !scales) return undefined;
  const at = async (k: number): Promise<number | null> => {
    const scaled = { ...engine, modelTimeScale: (engine.modelTimeScale ?? 1) * k };
    const r = (await predictCapacity({ engine: scaled, settings: job.capacity, workload, limits: job.limits, seed: job.seed })).result.feasibleMax;
    return r !== null && r > 0 ? r : null;
  };
  return { low: await at(scales.slow), high: await at(scales.fast), level: Math.round(basis.level * 1000) / 10 };
}

export async function evaluateCandidate(job: PlanJobSettings, shape: CandidateShape): Promise<EvaluatedCapacity> {
  const started = performance.now();
  const workload = planWorkload(job);
  const engine = engineOptions(job.model, shape, { seed: job.seed, ...jobEngineExtras(job) });
  const { result, stages } = await predictCapacity({ engine, settings: job.capacity, workload, limits: job.limits, seed: job.seed });
  // A deployment measured by `plan --verify` holds `scale` times what the simulator gives it (capacity-factor.ts);
  // its interval moves with it.
  const scale = capacityScale(job, shape);
  const predicted = await capacityIntervalOf(job, engine, workload);
  const interval = predicted && scale !== 1
    ? { ...predicted, low: predicted.low === null ? null : predicted.low * scale, high: predicted.high === null ? null : predicted.high * scale }
    : predicted;
  const base = {
    firstBreach: result.firstBreach, probes: result.probes.length, verdict: result.verdict,
    ...(interval ? { capacityInterval: interval, replicasOptimistic: interval.high !== null ? replicasFor(job.rate, interval.high) : null } : {}),
  };
  const simulated = result.feasibleMax;
  if (simulated === null || !(simulated > 0)) {
    const first = stages[0];
    const lowest = first ? { lowest: loadPoint(first, first.requestThroughput, shape.gpus, job) } : {};
    // At the optimistic end some load met the SLO: whether it does is for a measurement to say.
    const uncertain = interval?.high ? { uncertain: `no load meets the SLO as predicted, but at the optimistic end of its ${interval.level}% interval one replica holds ${interval.high.toFixed(2)} req/s` } : {};
    return { ...base, capacityPerReplica: null, ...lowest, ...uncertain, replicasAtPrediction: null, elapsedMs: performance.now() - started };
  }
  const capacity = simulated * scale;
  const scaled = scale !== 1 ? { firstBreach: result.firstBreach === null ? null : result.firstBreach * scale, capacityFactor: scale } : {};
  const atCapacityStage = stageAtLoad(stages, result.probes, simulated);
  if (interval && interval.low === null) {
    // The pessimistic end meets the SLO at no load: the candidate may or may not do; measure it.
    return {
      ...base, ...scaled, capacityPerReplica: capacity, replicasAtPrediction: replicasFor(job.rate, capacity),
      ...(atCapacityStage ? { atCapacity: loadPoint(atCapacityStage, capacity, shape.gpus, job) } : {}),
      uncertain: `one replica holds ${capacity.toFixed(2)} req/s as predicted, but at the pessimistic end of its ${interval.level}% interval no load meets the SLO`,
      elapsedMs: performance.now() - started,
    };
  }
  // Sized on the pessimistic capacity when there is an interval (the point capacity's count is kept beside it).
  const sizing = interval?.low ?? capacity;
  // The search pooled its probes; the operating point is a fresh row at another rate. Should it miss the SLO
  // (noise at a boundary the search placed just above the share), one more replica is what the plan must say.
  const fromSearch = replicasFor(job.rate, sizing);
  let replicas = fromSearch;
  let atLoad = (await predictAtRate(job, shape, workload, job.rate / replicas)).point;
  while (!atLoad.meetsSlo && replicas < fromSearch + MAX_EXTRA_REPLICAS) {
    replicas++;
    atLoad = (await predictAtRate(job, shape, workload, job.rate / replicas)).point;
  }
  return {
    ...base,
    ...scaled,
    capacityPerReplica: capacity,
    ...(atCapacityStage ? { atCapacity: loadPoint(atCapacityStage, capacity, shape.gpus, job) } : {}),
    atLoad,
    replicas,
    replicasAtPrediction: replicasFor(job.rate, capacity),
    ...(replicas > fromSearch ? { replicasAdded: replicas - fromSearch } : {}),
    elapsedMs: performance.now() - started,
  };
}

/** The last probe run at a load (repeats of one load are pooled by the fit; the last one stands for them). */
function stageAtLoad(stages: readonly StageSummary[], probes: ReadonlyArray<{ stage: number; load: number }>, load: number): StageSummary | undefined {
  const at = probes.filter((p) => p.load === load).sort((a, b) => b.stage - a.stage)[0];
  return at ? stages[at.stage] : undefined;
}

/**
 * One replica alone at `rate` (open loop, the search's arrivals): the figures a deployment of `rate × replicas`
 * would show, and whether it meets the SLO. `limits` overrides the search's row limits (the verification runs longer).
 * With `cluster`, `rate` is the whole load, offered to that many replicas behind the router (predict --replicas N
 * --router P); the point's rate and tokens are then one replica's share.
 */
export async function predictAtRate(
  job: PlanJobSettings,
  shape: CandidateShape,
  workload: Workload,
  rate: number,
  opts: { limits?: PlanJobSettings['limits']; seed?: number; cluster?: { replicas: number; router: RouterPolicy }; pd?: PdSplit; modelTimeScale?: number } = {},
): Promise<{ point: LoadPoint; summary: StageSummary }> {
  const seed = opts.seed ?? job.seed;
  const engine = engineOptions(job.model, shape, { seed, ...jobEngineExtras(job), ...(opts.modelTimeScale !== undefined && opts.modelTimeScale !== 1 ? { modelTimeScale: opts.modelTimeScale } : {}) });
  // A cluster's energy is not summed over its replicas (virtual-runner.ts), nor a P/D deployment's: no ledger is kept.
  const runner = createVirtualStageRunner(engine, { seed, ...(opts.cluster ? { cluster: opts.cluster, energy: false } : {}), ...(opts.pd ? { pd: opts.pd, energy: false } : {}) });
  const profile = job.capacity.arrival === 'poisson' ? 'poisson' : 'constant';
  // A measured capacity factor: `rate` on the real deployment is the simulated one at rate / factor.
  const simulatedRate = rate / capacityScale(job, shape);
  const bench = await runBenchmark({ profile, limits: opts.limits ?? job.limits, workload, rates: [simulatedRate] }, runner, { slo: job.capacity.slo });
  const summary = bench.stages[0] as StageSummary;
  const energy = runner.energyOf(summary);
  if (energy) summary.energy = energy;
  const engines = opts.cluster?.replicas ?? (opts.pd ? opts.pd.prefill + opts.pd.decode : 1);
  return { point: loadPoint(summary, rate / engines, shape.gpus, job), summary };
}

/** The figures of one predicted row that the plan reports, and whether the row met the SLO as a capacity probe would. */
export function loadPoint(s: StageSummary, rate: number, gpus: number, job: Pick<PlanJobSettings, 'capacity' | 'meanOutputTokens'>): LoadPoint {
  const settings = job.capacity;
  const ttft = s.metrics.ttftMs;
  const itl = s.metrics.itlMs;
  const attainment = s.sloAttainment?.percent ?? 0;
  const missed = missReason(s, attainment, settings);
  return {
    ratePerReplica: rate,
    attainment,
    meanTtftMs: ttft?.mean ?? null,
    p99TtftMs: ttft?.p99 ?? null,
    meanItlMs: itl?.mean ?? null,
    p99ItlMs: itl?.p99 ?? null,
    outputTokensPerSPerUser: itl && itl.mean > 0 ? 1000 / itl.mean : null,
    // The load held, not the row's windowed throughput: near capacity a short window can read tokens of requests
    // sent before it, and the plan's figures must add up (replicas × this = the required output tokens/s).
    outputTokensPerSPerGpu: (rate * job.meanOutputTokens) / gpus,
    joulesPerOutputToken: s.energy?.joulesPerOutputToken ?? null,
    avgWatts: s.energy?.avgWatts ?? null,
    meetsSlo: missed === undefined,
    ...(missed !== undefined ? { missed } : {}),
  };
}

/** Why a row fails the SLO as a capacity probe would judge it; undefined when it passes. */
function missReason(s: StageSummary, attainment: number, settings: Pick<CapacitySettings, 'attainment' | 'maxErrorShare'>): string | undefined {
  if (s.requests.ok === 0) return s.firstError ? `no request succeeded (${s.firstError})` : 'no request succeeded';
  if (s.overSaturated !== undefined) return `over-saturated: ${s.overSaturated}`;
  if (s.belowTarget) return `did not keep up with its rate${s.overload ? `: ${s.overload}` : ''}`;
  if (s.failureShare > settings.maxErrorShare) return `${(s.failureShare * 100).toFixed(1)}% of requests failed (at most ${+(settings.maxErrorShare * 100).toFixed(2)}% allowed)`;
  if (attainment < settings.attainment) return `${attainment.toFixed(1)}% of requests met the limits (${settings.attainment}% needed)`;
  return undefined;
}
