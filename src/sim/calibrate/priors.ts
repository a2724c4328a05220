import { GGUF_QUANTS } from '../catalog/gguf-quants.js';
import type { Calibration } from './types.js';

/** Physically motivated starting points and fallbacks for anything the seeds do not cover. */
export const PRIORS: Calibration = {
  note: 'priors (research/simulator.md §3, §6.7)',
  hardware: {
    'A100-40GB': { etaM: 0.8, etaC: 0.7, linkAlphaUs: 10, linkBetaGBs: 150 },
    'A100-80GB': { etaM: 0.8, etaC: 0.7, linkAlphaUs: 10, linkBetaGBs: 150 },
    'L20-48GB': { etaM: 0.85, etaC: 0.7, linkAlphaUs: 20, linkBetaGBs: 20 },
    L40S: { etaM: 0.8, etaC: 0.6, linkAlphaUs: 20, linkBetaGBs: 20 },
    H100: { etaM: 0.8, etaC: 0.65, linkAlphaUs: 8, linkBetaGBs: 250 },
    H200: { etaM: 0.8, etaC: 0.65, linkAlphaUs: 8, linkBetaGBs: 250 },
    'RTX-4090': { etaM: 0.85, etaC: 0.6, linkAlphaUs: 35, linkBetaGBs: 10 },
    'RTX-3090': { etaM: 0.85, etaC: 0.6, linkAlphaUs: 35, linkBetaGBs: 10 },
    A10: { etaM: 0.8, etaC: 0.6, linkAlphaUs: 20, linkBetaGBs: 20 },
    L4: { etaM: 0.8, etaC: 0.6, linkAlphaUs: 20, linkBetaGBs: 20 },
    'H100-PCIe': { etaM: 0.8, etaC: 0.65, linkAlphaUs: 20, linkBetaGBs: 25 },
    // NVLink bridges between pairs (600 GB/s, three links against the SXM board's eighteen): A100-class link priors.
    'H100-NVL': { etaM: 0.8, etaC: 0.65, linkAlphaUs: 10, linkBetaGBs: 150 },
    GH200: { etaM: 0.8, etaC: 0.65, linkAlphaUs: 8, linkBetaGBs: 250 },
    H20: { etaM: 0.8, etaC: 0.7, linkAlphaUs: 8, linkBetaGBs: 250 },
  },
  engines: {
    'vllm-0.2': { c0Ms: 3, cSeqUs: 120, tApiMs: 5 },
    'vllm-v0': { c0Ms: 1.6, cSeqUs: 40, tApiMs: 11.5 },
    'vllm-v1': { c0Ms: 1, cSeqUs: 15, tApiMs: 8 },
    sglang: { c0Ms: 1.2, cSeqUs: 20, tApiMs: 10 },
    lmdeploy: { c0Ms: 0.6, cSeqUs: 10, tApiMs: 15 },
    tgi: { c0Ms: 2, cSeqUs: 60, tApiMs: 5 },
    triton: { c0Ms: 0.5, cSeqUs: 8, tApiMs: 5 },
    trtllm: { c0Ms: 0.5, cSeqUs: 8, tApiMs: 5 },
    'mlc-llm': { c0Ms: 1, cSeqUs: 20, tApiMs: 5 },
    llamacpp: { c0Ms: 0.5, cSeqUs: 30, tApiMs: 2 },
  },
  quant: {
    'legacy:awq': { qc: 0.3, qm: 0.5 },
    'legacy:gptq-int4': { qc: 0.3, qm: 0.5 },
    'legacy:gptq-int8': { qc: 0.4, qm: 0.6 },
    'modern:awq': { qc: 0.8, qm: 0.8 },
    'modern:gptq-int4': { qc: 0.8, qm: 0.8 },
    'modern:gptq-int8': { qc: 0.7, qm: 0.8 },
    // Relative to the FP8 tensor peak where the GPU has one (W8A8), else to the 16-bit peak (W8A16).
    'modern:fp8': { qc: 0.7, qm: 0.85 },
    'legacy:fp8': { qc: 0.5, qm: 0.7 },
    // GGUF (llama.cpp): the bytes per weight already count the block scales, and llama.cpp's CPU decode reads each
    // weight once per step, so no penalty is assumed beyond them; uncalibrated priors, refit from a measured run.
    ...Object.fromEntries(Object.keys(GGUF_QUANTS).map((q) => [`modern:${q}`, { qc: 1, qm: 1 }])),
  },
  etaMoe: 0.5,
  fitted: [],
};
