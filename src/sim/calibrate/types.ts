/** Fitted (or prior) physical constants. Keys: hardware calibration key, engine profile key, `family:quant`. */
export interface HardwareCal {
  /** Streaming-bandwidth efficiency (weights, KV). */
  etaM: number;
  /** Dense GEMM compute efficiency. */
  etaC: number;
  /** All-reduce fixed latency per call. */
  linkAlphaUs: number;
  /** All-reduce effective bus bandwidth for large (prefill) messages. */
  linkBetaGBs: number;
  /** This hardware's compute/memory overlap p (Calibration.overlapP; absent: that). A CPU's run fit sets it. */
  overlapP?: number;
}

export interface EngineCal {
  /** Host time per step (scheduler, input prep, sampler sync). */
  c0Ms: number;
  /** Host time per scheduled sequence per step. */
  cSeqUs: number;
  /** Per-request API overhead (HTTP parse, tokenize, first-chunk egress), split ingest/egress by the profile. */
  tApiMs: number;
  /** This engine's fused-MoE GEMM efficiency relative to dense GEMMs (absent: the calibration's `etaMoe`). */
  etaMoe?: number;
  /** This engine's MoE kernels' expert-weight streaming efficiency relative to dense weights (absent: 1). */
  moeBw?: number;
}

export interface QuantCal {
  /** Quantized-GEMM compute efficiency relative to fp16. */
  qc: number;
  /** Weight-streaming efficiency of the dequantizing kernels relative to fp16. */
  qm: number;
}

export interface Calibration {
  /** Free text: where the numbers came from. */
  note: string;
  hardware: Record<string, HardwareCal>;
  engines: Record<string, EngineCal>;
  quant: Record<string, QuantCal>;
  /** Fused-MoE GEMM efficiency relative to dense GEMMs. */
  etaMoe: number;
  /**
   * p of the p-norm that joins a kernel's compute and memory times (absent: 2). 1 adds them, large p tends to the
   * roofline's max: how well the GPU overlaps weight streaming with math in small-batch GEMMs.
   */
  overlapP?: number;
  /** Keys that were fitted on seed data (the rest are priors). */
  fitted: string[];
  /** Measured capacities of whole deployments (`plan --verify N --save-calibration FILE`): `plan` scales by them. */
  capacityFactors?: CapacityFactor[];
  /**
   * `predict --calibrate-from RUN[,RUN…]`: how sure the fit is, for prediction intervals (absent: the published
   * tables' residuals give the intervals). `deployment`: the configuration it was fitted for (engine, model, GPU, TP).
   */
  intervals?: { spreads: CalibratedSpreads; runs: string[]; deployment: { engine: string; model: string; gpu: string; gpus: number } };
}

/**
 * One deployment measured by `plan --verify`: its capacity under the SLO over the capacity the simulator gives it with
 * this file's constants. `plan --calibration FILE` multiplies that deployment's simulated capacity by `factor`.
 */
export interface CapacityFactor {
  engine: string;
  /** Catalog model name. */
  model: string;
  /** Catalog GPU name. */
  gpu: string;
  gpus: number;
  quant: string;
  /** Absent: the model's own KV-cache type (auto). */
  kvCacheDtype?: string;
  /** measuredCapacity / simulatedCapacity. */
  factor: number;
  /** req/s one replica holds within the SLO, simulated with this file's constants (no factor applied). */
  simulatedCapacity: number;
  /** req/s one replica held within the SLO when measured. */
  measuredCapacity: number;
  /** What it was measured under, for the reader: SLO, workload, the run folder, when. */
  slo: string;
  workload: string;
  runDir?: string;
  measuredAt: string;
}

/** One figure's log-errors after a calibration from measured runs (run-intervals.ts). */
export interface CalibratedSpread {
  /** Mean ln(predicted/measured) over the calibration's figures of that metric (after the fit). */
  bias: number;
  /** Standard deviation of those residuals (degrees of freedom of the fitted constants taken out). */
  sd: number;
  /** The fitted constants' standard error, as a prediction's log-error (Jacobian propagation). */
  se: number;
  /** Figures it rests on. */
  n: number;
  /**
   * What one new row cannot be predicted better than, as a log-error: the rows' own sampling error of the figure
   * (per-request spread over √requests) and, from two or more runs, how far the runs' mean errors differ (a host's
   * load between runs). The interval takes this in place of `sd` where it is larger. Absent in older files: 0.
   */
  noise?: number;
}

/** Per run metric (run-score.ts keys: ttft, itl, e2e, requestThroughput, outputTokenThroughput) and pooled (`all`). */
export type CalibratedSpreads = Partial<Record<'ttft' | 'itl' | 'e2e' | 'requestThroughput' | 'outputTokenThroughput' | 'all', CalibratedSpread>>;
