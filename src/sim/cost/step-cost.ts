import { PRIORS } from '../calibrate/priors.js';
import type { Calibration, HardwareCal } from '../calibrate/types.js';
import { deriveModel, kvBytesPerTokenPerLayer, moeLayerShare } from '../catalog/models.js';
import { LINK_PRIORS, QUANTS, embeddingBytes } from '../catalog/hardware.js';
import type { HardwareSpec, KvCacheDtype, ModelSpec, QuantName } from '../catalog/types.js';
import type { EngineProfile } from '../engine/profiles.js';

/** The calibration's entry for a GPU; one without an entry (an older saved file, a GPU added later) falls back to the priors. */
function hardwareConstants(hw: HardwareSpec, cal: Calibration): HardwareCal | undefined {
  const key = hw.calibrationKey ?? hw.name;
  return cal.hardware[key] ?? cal.hardware[hw.name] ?? PRIORS.hardware[key];
}

/**
 * Latency (µs) and effective bandwidth (GB/s) of the GPU's link to its neighbours (NVLink, PCIe): the constants fitted
 * on all-reduce timings where the calibration has them, else the link kind's priors (catalog/hardware.ts LINK_PRIORS).
 * Tensor parallelism's all-reduces and prefill/decode disaggregation's KV transfers (cluster/pd.ts) both use them;
 * `gpus` is how many GPUs the traffic spans (the tensor-parallel group, or every GPU of a P/D deployment).
 */
export function linkConstants(hw: HardwareSpec, cal: Calibration, gpus = 1): { alphaUs: number; betaGBs: number } {
  // H100 NVL: NVLink joins pairs; traffic among more GPUs than a pair crosses PCIe, with the PCIe link's priors (the
  // calibration's link constants are the NVLink pair's).
  if (hw.nvlinkGroup !== undefined && gpus > hw.nvlinkGroup) return { ...LINK_PRIORS.pcie };
  const hc = hardwareConstants(hw, cal);
  const prior = LINK_PRIORS[hw.link];
  return { alphaUs: hc?.linkAlphaUs ?? prior.alphaUs, betaGBs: hc?.linkBetaGBs ?? prior.betaGBs };
}

/** What one step computes. Kept allocation-light: the engine reuses these arrays. */
export interface BatchSummary {
  decodeSeqs: number;
  /** Σ context length over decoding sequences (KV read by attention). */
  decodeCtxSum: number;
  prefillCount: number;
  /** Prior context (already in KV) of each prefill chunk. */
  prefillPrior: number[];
  /** New tokens of each prefill chunk (padded length for engines that pad). */
  prefillTokens: number[];
  /** Sequences whose logits are computed (decodes + prefills that finish their prompt). */
  emittingSeqs: number;
  /** Speculative decoding: draft tokens verified with each decode (K; absent or 0 = one token per decode). */
  specK?: number;
  /** Vision encoder FLOPs of the images whose prompts start in this step (absent: none). */
  visionFlops?: number;
}

/**
 * What a step asks of the GPU at its datasheet peaks (sim/engine/power.ts turns it into watts): the seconds its
 * FLOPs would take at the tensor peak and its bytes at the memory bandwidth's peak, per GPU. Host time is neither.
 */
export interface StepActivity {
  computeS: number;
  memoryS: number;
}

export interface StepCostBreakdown {
  linear: number;
  attention: number;
  elementwise: number;
  comm: number;
  head: number;
  host: number;
  total: number;
}

const TAU_K = 4e-6; // fixed per-GEMM latency
const TAU_A = 8e-6; // fixed attention kernel latency
const ETA_A = 0.5; // attention FLOP efficiency

/**
 * How far a kernel's compute and memory time overlap: the p-norm of the two (p = 2 by default; 1 adds them, ∞ is the
 * roofline's max). Small-M GEMMs of short prefills sit between the two bounds; the calibration's `overlapP` fits p.
 */
const softP = (p: number) => (p === 2 ? (a: number, b: number): number => Math.sqrt(a * a + b * b) : (a: number, b: number): number => (a ** p + b ** p) ** (1 / p));

/** Pure per-step cost model (research/simulator.md §3, §6.2b). Returns milliseconds. */
export class StepCostModel {
  readonly layers: number;
  private readonly linFlop: number;
  private readonly linMem: number;
  private readonly expFlop: number;
  private readonly expMem: number;
  private readonly experts: number;
  private readonly topK: number;
  private readonly attFlopPerCtx: number;
  private readonly attMemPerCtxDecode: number;
  private readonly attMemPerCtxPrefill: number;
  private readonly elemPerToken: number;
  private readonly arAlpha: number;
  private readonly arPerToken: number;
  private readonly headFlop: number;
  private readonly headMem: number;
  private readonly eagerFloor: number;
  private readonly c0: number;
  private readonly cSeq: number;
  private readonly overlap: boolean;
  /** Seconds per vision-encoder FLOP: a bf16 ViT split over the TP ranks at the GEMM efficiency. */
  private readonly visionPerFlop: number;
  /** Host overhead included (false for pure-roofline what-ifs). */
  readonly withHost: boolean;
  private readonly soft: (a: number, b: number) => number;
  /** Per-GPU work at the datasheet peaks (no efficiencies): FLOP-seconds and byte-seconds of each term (activity()). */
  private readonly peak: {
    lin: number; linMem: number; exp: number; expMem: number; att: number; attMem: number; elem: number; head: number; headMem: number; vision: number;
  };

  constructor(
    model: ModelSpec, hw: HardwareSpec, tp: number, quant: QuantName, eng: EngineProfile, cal: Calibration,
    opts: { pureRoofline?: boolean; kvCacheDtype?: KvCacheDtype } = {},
  ) {
    const d = deriveModel(model);
    const pure = opts.pureRoofline === true;
    const hc = hardwareConstants(hw, cal);
    const link = linkConstants(hw, cal, tp);
    const etaM = pure ? 1 : (hc?.etaM ?? 0.8);
    const etaC = pure ? 1 : (hc?.etaC ?? 0.65);
    const alpha = link.alphaUs * 1e-6;
    const beta = link.betaGBs * 1e9;
    const q = QUANTS[quant];
    const qKey = `${eng.quantFamily}:${quant}`;
    const qc = quant === 'fp16' || quant === 'bf16' || pure ? { qc: 1, qm: 1 } : (cal.quant[qKey] ?? PRIORS.quant[qKey] ?? { qc: 0.7, qm: 0.8 });
    const ec = cal.engines[eng.calKey] ?? PRIORS.engines[eng.calKey] ?? { c0Ms: 1, cSeqUs: 20, tApiMs: 5 };
    const PK = hw.tflops * 1e12;
    // FP8 weights run FP8 GEMMs where the GPU has FP8 tensor cores (W8A8); elsewhere they dequantize to 16 bits (W8A16).
    const linPK = quant === 'fp8' && hw.fp8Tflops ? hw.fp8Tflops * 1e12 : PK;
    const BW = hw.bwGBs * 1e9 * etaM;
    const denseParams = d.attnParamsPerLayer + d.mlpParamsPerLayer;
    this.layers = model.layers;
    this.linFlop = (2 * denseParams) / tp / (etaC * qc.qc * linPK);
    this.linMem = (denseParams * q.bytesPerWeight) / tp / (BW * qc.qm);
    if (model.moe) {
      // Averaged over layers when only some of them are MoE layers.
      const perExpert = 3 * model.hidden * model.moe.expertFfn * moeLayerShare(model);
      // MoE kernels are the engine's own (fused Triton kernels, CUTLASS grouped GEMMs): per-engine where fitted.
      // Legacy kernels (untuned fused-MoE configurations) take the shared constant, not the engine's current kernels'.
      const own: Pick<typeof ec, 'etaMoe' | 'moeBw'> = eng.quantFamily === 'legacy' ? {} : ec;
      const etaMoe = pure ? 1 : (own.etaMoe ?? cal.etaMoe);
      const moeBw = pure ? 1 : (own.moeBw ?? 1);
      this.expFlop = (2 * model.moe.activeExperts * perExpert) / tp / (etaC * etaMoe * qc.qc * linPK);
      this.expMem = (perExpert * q.bytesPerWeight) / tp / (BW * qc.qm * moeBw);
      this.experts = model.moe.experts;
      this.topK = model.moe.activeExperts;
    } else {
      this.expFlop = 0;
      this.expMem = 0;
      this.experts = 0;
      this.topK = 0;
    }
    const kvPerLayer = kvBytesPerTokenPerLayer(model, tp, opts.kvCacheDtype);
    const g = Math.pow(model.heads / model.kvHeads, pure ? 0 : eng.gqaGamma);
    this.attFlopPerCtx = (4 * (model.heads / tp) * model.headDim) / (ETA_A * PK);
    this.attMemPerCtxDecode = (kvPerLayer * g) / (BW * (pure ? 1 : eng.pagedAttnBw));
    this.attMemPerCtxPrefill = kvPerLayer / BW;
    this.elemPerToken = (2 * (14 * model.hidden + (3 * d.ffnActive) / tp)) / BW;
    this.arAlpha = tp > 1 ? 2 * alpha : 0;
    this.arPerToken = tp > 1 ? (2 * 2 * ((tp - 1) / tp) * model.hidden * 2) / beta : 0;
    this.headFlop = (2 * model.hidden * model.vocab) / tp / (etaC * PK);
    this.headMem = (model.hidden * model.vocab * embeddingBytes(quant)) / tp / BW;
    this.eagerFloor = eng.eager && !pure ? eng.eager.kernelsPerLayer * eng.eager.launchUs * 1e-6 : 0;
    this.withHost = !pure;
    this.c0 = pure ? 0 : ec.c0Ms * 1e-3;
    this.cSeq = pure ? 0 : ec.cSeqUs * 1e-6;
    this.overlap = eng.overlapHost;
    this.visionPerFlop = 1 / (tp * etaC * PK);
    this.soft = softP(pure ? 2 : (hc?.overlapP ?? cal.overlapP ?? 2));
    const peakBw = hw.bwGBs * 1e9;
    const perExpert = model.moe ? 3 * model.hidden * model.moe.expertFfn * moeLayerShare(model) : 0;
    this.peak = {
      lin: (2 * denseParams) / tp / linPK,
      linMem: (denseParams * q.bytesPerWeight) / tp / peakBw,
      exp: model.moe ? (2 * model.moe.activeExperts * perExpert) / tp / linPK : 0,
      expMem: (perExpert * q.bytesPerWeight) / tp / peakBw,
      att: (4 * (model.heads / tp) * model.headDim) / PK,
      attMem: kvPerLayer / peakBw,
      elem: (2 * (14 * model.hidden + (3 * d.ffnActive) / tp)) / peakBw,
      head: (2 * model.hidden * model.vocab) / tp / PK,
      headMem: (model.hidden * model.vocab * embeddingBytes(quant)) / tp / peakBw,
      vision: 1 / (tp * PK),
    };
  }

  /** The step's FLOPs and bytes per GPU as seconds at the datasheet peaks (the power model's input). */
  activity(b: BatchSummary): StepActivity {
    const p = this.peak;
    const q = 1 + (b.specK ?? 0);
    let T = b.decodeSeqs * q;
    for (let i = 0; i < b.prefillCount; i++) T += b.prefillTokens[i] ?? 0;
    if (T === 0) return { computeS: 0, memoryS: 0 };
    let c = T * p.lin;
    let m = p.linMem + T * p.elem;
    if (this.experts > 0) {
      const touched = this.experts * (1 - Math.pow(1 - this.topK / this.experts, T));
      c += T * p.exp;
      m += touched * p.expMem;
    }
    c += q * b.decodeCtxSum * p.att;
    m += b.decodeCtxSum * p.attMem;
    for (let i = 0; i < b.prefillCount; i++) {
      const n = b.prefillTokens[i] ?? 0;
      const s = b.prefillPrior[i] ?? 0;
      c += n * (s + n / 2) * p.att;
      m += (s + n) * p.attMem;
    }
    const L = this.layers;
    const emitting = b.emittingSeqs + b.decodeSeqs * (q - 1);
    const head = b.emittingSeqs > 0 ? { c: emitting * p.head, m: p.headMem } : { c: 0, m: 0 };
    return { computeS: L * c + head.c + (b.visionFlops ?? 0) * p.vision, memoryS: L * m + head.m };
  }

  /** Step duration in ms. */
  stepMs(b: BatchSummary): number {
    return this.compute(b, null) * 1000;
  }

  breakdown(b: BatchSummary): StepCostBreakdown {
    const out: StepCostBreakdown = { linear: 0, attention: 0, elementwise: 0, comm: 0, head: 0, host: 0, total: 0 };
    out.total = this.compute(b, out) * 1000;
    return out;
  }

  private compute(b: BatchSummary, out: StepCostBreakdown | null): number {
    // A speculative decode verifies its K drafts with its own token: K + 1 query tokens per sequence.
    const soft = this.soft;
    const q = 1 + (b.specK ?? 0);
    let T = b.decodeSeqs * q;
    for (let i = 0; i < b.prefillCount; i++) T += b.prefillTokens[i] ?? 0;
    const nSeqs = b.decodeSeqs + b.prefillCount;
    if (T === 0) return this.c0;
    let lin = soft(T * this.linFlop, this.linMem) + 4 * TAU_K;
    if (this.experts > 0) {
      const touched = this.experts * (1 - Math.pow(1 - this.topK / this.experts, T));
      lin += soft(T * this.expFlop, touched * this.expMem) + 4 * TAU_K;
    }
    let att = 0;
    if (b.decodeSeqs > 0) {
      att += soft(q * b.decodeCtxSum * this.attFlopPerCtx, b.decodeCtxSum * this.attMemPerCtxDecode) + TAU_A;
    }
    for (let i = 0; i < b.prefillCount; i++) {
      const p = b.prefillTokens[i] ?? 0;
      const s = b.prefillPrior[i] ?? 0;
      att += soft(p * (s + p / 2) * this.attFlopPerCtx, (s + p) * this.attMemPerCtxPrefill) + TAU_A;
    }
    const elem = T * this.elemPerToken + 6 * TAU_K;
    const layer = Math.max(lin + att + elem, this.eagerFloor);
    const comm = this.arAlpha + T * this.arPerToken;
    const head = b.emittingSeqs > 0 ? soft((b.emittingSeqs + b.decodeSeqs * (q - 1)) * this.headFlop, this.headMem) : 0;
    // Images: the vision encoder's GEMMs (~2 FLOPs per parameter per patch) run before the prefill, in the same step.
    const vision = (b.visionFlops ?? 0) * this.visionPerFlop;
    const gpu = this.layers * (layer + comm) + head + vision;
    const host = this.c0 + this.cSeq * nSeqs;
    const total = this.overlap ? Math.max(gpu, host) + 0.1 * Math.min(gpu, host) : gpu + host;
    if (out) {
      const L = this.layers;
      out.linear = (L * lin + vision) * 1000;
      out.attention = L * att * 1000;
      out.elementwise = L * elem * 1000;
      out.comm = L * comm * 1000;
      out.head = head * 1000;
      out.host = host * 1000;
    }
    return total;
  }
}
