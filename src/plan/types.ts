import type { CapacitySettings } from '../load/capacity-types.js';
import type { StageLimits } from '../load/types.js';
import type { Calibration } from '../sim/calibrate/types.js';
import type { KvCacheDtype, QuantName } from '../sim/catalog/types.js';
import type { LengthDist } from '../workload/lengths.js';
import type { RouterPolicy } from '../sim/cluster/router.js';

/** One deployment shape: a replica is `gpus` GPUs of one kind running one engine on one quantization. */
export interface CandidateShape {
  /** Catalog GPU name (canonical, e.g. `H100`). */
  gpu: string;
  /** GPUs per replica (tensor parallel). */
  gpus: number;
  quant: QuantName;
  /** Engine name as `--engine` takes it (vllm, sglang, lmdeploy, tgi, triton, …). */
  engine: string;
}

/** What every candidate is evaluated against: plain data, so it can cross to a worker thread. */
export interface PlanWorkloadSpec {
  prompt: LengthDist;
  output: LengthDist;
  seed: number;
  /** `--prefix-tokens T --prefix-groups G`: every prompt starts with one of G shared prefixes of T tokens. */
  prefix?: { tokens: number; groups: number };
}

export interface PlanJobSettings {
  /** Model as the user named it (a -AWQ suffix fixes the quantization). */
  model: string;
  workload: PlanWorkloadSpec;
  capacity: CapacitySettings;
  limits: StageLimits;
  seed: number;
  /** Required load, requests per second (split evenly over the replicas). */
  rate: number;
  /** Mean output length of the workload (tokens per request), to turn rates into output tokens/s. */
  meanOutputTokens: number;
  /** Catalog files to load before resolving (worker threads have their own registry). */
  catalogFiles: string[];
  calibration?: Calibration;
  /** `--kv-cache-dtype`: every candidate's KV-cache element type; undefined: the model's implied one. */
  kvCacheDtype?: KvCacheDtype;
  /** `--interval-level`: percent of the capacity intervals (0 or absent: point capacities, sized on them). */
  intervalLevel?: number;
}

/** A capacity's interval: the search at the pessimistic and optimistic ends of the engine's speed (null: no load met the SLO). */
export interface CapacityInterval {
  low: number | null;
  high: number | null;
  level: number;
}

/** Figures of one replica at one load (a predicted stage). */
export interface LoadPoint {
  /** Requests per second offered to one replica. */
  ratePerReplica: number;
  /** Percent of requests meeting every SLO limit (failed requests are misses). */
  attainment: number;
  meanTtftMs: number | null;
  p99TtftMs: number | null;
  meanItlMs: number | null;
  p99ItlMs: number | null;
  /** Output tokens per second one request sees while it streams: 1000 / mean ITL. */
  outputTokensPerSPerUser: number | null;
  /** Output tokens per second the replica serves at this rate (rate × mean output length), divided by its GPUs. */
  outputTokensPerSPerGpu: number;
  meetsSlo: boolean;
  /** GPU energy per output token of the replica at this load (the simulator's power model); null: no power figures. */
  joulesPerOutputToken?: number | null;
  /** Mean power of the replica's GPUs together at this load, W. */
  avgWatts?: number | null;
  /** Why the row missed the SLO (did not keep up, attainment under the target, too many failures). */
  missed?: string;
}

/** What a worker sends back for one candidate it searched. */
export interface EvaluatedCapacity {
  /** Highest rate one replica holds within the SLO; null: not even the lowest probe met it. */
  capacityPerReplica: number | null;
  firstBreach: number | null;
  probes: number;
  verdict: string;
  /** The replica at its capacity (the probe at feasibleMax): the Pareto chart's point. */
  atCapacity?: LoadPoint;
  /** No load met the SLO: the first probe (one request at a time), to say by how much. */
  lowest?: LoadPoint;
  /** The replica at its share of the required load (rate / replicas). */
  atLoad?: LoadPoint;
  replicas?: number;
  /** Replicas added beyond ceil(rate / capacity) because the operating point missed the SLO. */
  replicasAdded?: number;
  /** The measured capacity factor applied (plan --calibration FILE with capacityFactors); absent: 1. */
  capacityFactor?: number;
  /** With intervals: the capacity's interval; replicas are then sized on its pessimistic end. */
  capacityInterval?: CapacityInterval;
  /** Replicas at the optimistic end, and at the point capacity. */
  replicasOptimistic?: number | null;
  replicasAtPrediction?: number | null;
  /** The interval straddles the SLO (one end meets it at some load, the other at none): why. */
  uncertain?: string;
  elapsedMs: number;
}

export type PlanObjective = 'cost' | 'energy';

/** `uncertain`: its capacity interval straddles the SLO — one end meets it, the other does not (measure it: plan --verify). */
export type CandidateStatus = 'feasible' | 'uncertain' | 'slo-unmet' | 'pruned' | 'skipped';

/** One row of the plan, in ranked order in `--json`'s `candidates`. */
export interface PlanCandidate extends CandidateShape {
  /** Rank among feasible candidates (1 = cheapest); absent for the others. */
  rank?: number;
  feasible: boolean;
  status: CandidateStatus;
  /** Why a candidate is not feasible (cannot run, SLO not met at any load, pruned); null when feasible. */
  reason: string | null;
  /** $ per GPU-hour used. */
  gpuHourPrice: number;
  /** Requests per second one replica holds within the SLO (null: not searched or none). */
  capacityPerReplica: number | null;
  replicas: number | null;
  totalGpus: number | null;
  /** $ per hour for every GPU of every replica. */
  costPerHour: number | null;
  /** $ per 1M output tokens at the required load (every GPU billed, busy or not). */
  costPerMillionOutputTokens: number | null;
  /** At the required load: output tokens/s of the whole deployment over its GPUs. */
  tokensPerSecondPerGpu: number | null;
  /** At the required load: 1000 / mean ITL of one replica at its share. */
  tokensPerSecondPerUser: number | null;
  /**
   * At the required load: GPU energy per output token (every replica serves its share, so the deployment's figure is
   * one replica's), from the simulator's power model (sim/engine/power.ts); null where the GPU has no power figures.
   */
  joulesPerOutputToken: number | null;
  atLoad?: LoadPoint;
  atCapacity?: LoadPoint;
  /** Engine launch command for one replica (feasible candidates). */
  launch?: string;
  /** Measured capacity / simulated capacity of this deployment (`plan --verify`'s --save-calibration); absent: not measured. */
  capacityFactor?: number;
  /**
   * `--interval-level` (default 80%): the capacity per replica's interval. `replicas` is sized on its low end (the
   * pessimistic capacity); `replicasOptimistic` on its high end, `replicasAtPrediction` on the point capacity.
   */
  capacityInterval?: CapacityInterval;
  replicasOptimistic?: number | null;
  replicasAtPrediction?: number | null;
  /** Set when the interval straddles the SLO: listed apart as "uncertain — measure it". */
  uncertain?: string;
  /** Capacity search: probes run and its one-line answer. */
  search?: { probes: number; verdict: string; firstBreach: number | null; elapsedMs: number };
  /**
   * The router options (plan --router, routers.ts): this shape's replicas as one cluster behind each router at the
   * required load, in virtual time; present on the candidates they were evaluated for (--router-candidates).
   */
  routers?: RouterOption[];
  /**
   * What the candidate is ranked by: the cheapest option that meets the SLO — a router's cluster where one was
   * evaluated and met it, else the replicas sized above (router null: independent replicas, perfect balancing).
   * `topology` names the deployment's form, so other forms (prefill/decode splits) can sit beside it.
   */
  deployment?: PlanDeployment;
  /**
   * The prefill/decode splits (plan --pd, pd-splits.ts): this shape as P prefill + D decode engines at the required
   * load, in virtual time; present on the candidates they were evaluated for (--pd-candidates).
   */
  pd?: PdOption[];
  /** The colocated replicas the splits are compared with: the plan's own count behind a least-load balancer, same engine time. */
  pdColocated?: PdColocated;
}

/**
 * A deployment the plan can rank: `replicas` copies of the shape behind `router` (null: perfectly balanced), or
 * (`topology: 'pd'`) `prefill` + `decode` engines of the shape with the KV moved between them (`replicas` = engines).
 */
export interface PlanDeployment {
  topology: 'replicas' | 'pd';
  router: RouterPolicy | null;
  replicas: number;
  /** P/D: prefill and decode engines, and the split ratio they scale. */
  prefill?: number;
  decode?: number;
  split?: string;
  totalGpus: number;
  costPerHour: number;
  costPerMillionOutputTokens: number;
}

/** The figures of one cluster behind a router. */
export interface RouterFigures {
  /** Percent of requests meeting every SLO limit. */
  attainment: number;
  /** TTFT median and p99 over the cluster's requests, ms. */
  ttftMs: number | null;
  p99TtftMs: number | null;
  p99ItlMs: number | null;
  /** Prompt tokens served from the replicas' prefix caches over all prompt tokens (null: no prefix cache). */
  cacheHitRate: number | null;
}

/** One cluster of a shape behind one router at the required load, in virtual time. */
export interface RouterTrial extends RouterFigures {
  replicas: number;
  meetsSlo: boolean;
  /** Share of the requests on the busiest replica (1 / replicas: even). */
  busiestShare: number | null;
  missed?: string;
}

/**
 * A router's answer for one shape: the fewest replicas behind it that meet the SLO, and the clusters tried. Its
 * figures are that cluster's (or, when none met, the largest one tried).
 */
export interface RouterOption extends RouterFigures {
  topology: 'replicas';
  router: RouterPolicy;
  /** The fewest replicas that met the SLO (null: none of those tried). */
  replicas: number | null;
  meetsSlo: boolean;
  totalGpus: number | null;
  costPerHour: number | null;
  costPerMillionOutputTokens: number | null;
  /** Every replica count tried, fewest first. */
  tried: RouterTrial[];
}

/** One P/D deployment of a shape at the required load, in virtual time. */
export interface PdTrial extends RouterFigures {
  prefill: number;
  decode: number;
  meetsSlo: boolean;
  /** ITL median over the deployment's requests, ms. */
  itlMs: number | null;
  missed?: string;
}

/** A split ratio's answer for one shape: the fewest copies of it that meet the SLO, and the deployments tried. */
export interface PdOption extends RouterFigures {
  topology: 'pd';
  /** The ratio, `P:D`. */
  split: string;
  /** Engines of the cheapest deployment that met the SLO (null: none of those tried). */
  prefill: number | null;
  decode: number | null;
  meetsSlo: boolean;
  itlMs: number | null;
  totalGpus: number | null;
  costPerHour: number | null;
  costPerMillionOutputTokens: number | null;
  /** Every deployment tried, fewest engines first. */
  tried: PdTrial[];
}

/** The colocated baseline of the P/D comparison: the plan's replicas as one cluster behind least-load. */
export interface PdColocated extends RouterFigures {
  replicas: number;
  meetsSlo: boolean;
  itlMs: number | null;
}

/** `plan --pd`: which splits were tried on which candidates, how long it took, and the lines it printed. */
export interface PdComparison {
  splits: string[];
  /** Candidates evaluated (the cheapest feasible ones whose engine disaggregates, --pd-candidates). */
  candidates: number;
  /** Engines whose servers disaggregate (the only ones tried). */
  engines: string[];
  elapsedMs: number;
  /** Per evaluated candidate, each split against the colocated replicas: the printed lines. */
  lines: string[];
  /** The cheapest P/D deployment over the evaluated candidates, when one is the candidate's cheapest option. */
  best: (PlanDeployment & CandidateShape) | null;
}

/** `plan --router`: which routers were compared on which candidates, how long it took, and the lines it printed. */
export interface RouterComparison {
  routers: RouterPolicy[];
  /** Candidates evaluated (the cheapest feasible ones, --router-candidates). */
  candidates: number;
  /** Whether the workload shares prefixes (--prefix-tokens/--prefix-groups). */
  prefix: { tokens: number; groups: number } | null;
  elapsedMs: number;
  /** Per evaluated candidate, each router against round-robin (or the plan's own sizing): the printed lines. */
  lines: string[];
  /** The cheapest deployment over the evaluated candidates and routers. */
  best: (PlanDeployment & CandidateShape) | null;
}

export interface PlanVerification {
  shape: CandidateShape;
  replicas: number;
  ratePerReplica: number;
  point: LoadPoint;
  /** Requests the verification measured. */
  requests: number;
  /** The `inferbench predict` command that repeats the check. */
  command: string;
}

export interface PlanResult {
  model: string;
  /** Required load. */
  rate: number;
  outputTokensPerS: number;
  meanOutputTokens: number;
  workload: string;
  slo: CapacitySettings['slo'];
  attainment: number;
  maxErrorShare: number;
  arrival: CapacitySettings['arrival'];
  prices: { source: string; perGpuHour: Record<string, number> };
  /** What the feasible candidates are ranked by: $ per 1M output tokens (cost) or J per output token (energy). */
  objective: PlanObjective;
  candidates: PlanCandidate[];
  counts: { total: number; searched: number; feasible: number; sloUnmet: number; pruned: number; skipped: number; uncertain?: number };
  verification: PlanVerification | null;
  /** `--router` (default with a shared-prefix workload): the router comparison; absent when no router was evaluated. */
  routerComparison?: RouterComparison;
  /** `plan --pd`: the prefill/decode splits compared on the cheapest candidates. */
  pdComparison?: PdComparison;
  elapsedMs: number;
  threads: number;
  notes: string[];
}
