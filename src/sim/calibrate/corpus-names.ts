/**
 * How a row of the public tables (data/public-tables/public-tables.json) names its configuration, mapped to
 * the catalog's names. The file keeps each source's own wording ("meta-llama/Llama-3.1-8B(-Instruct) [table
 * says …]", "H200-SXM-141GB (DGX H200)", "FP8 weights+FP8 KV cache (…)"); these functions strip the editorial
 * notes and pick the engine profile of the row's engine era.
 */
import type { KvCacheDtype, QuantName } from '../catalog/types.js';
import { findModel } from '../catalog/registry.js';

export interface CorpusRow {
  id: number;
  tableGroup: string;
  source: string;
  model: string;
  gpu: string;
  gpuNorm: string;
  tp: number;
  engine: string;
  engineVersion: string;
  quant: string;
  inputTokens: number | null;
  outputTokens: number | null;
  workload: { numRequests?: number; totalInputTokens?: number; totalGeneratedTokens?: number; maxModelLen?: number; [k: string]: unknown };
  load: { kind: 'rate' | 'concurrency' | 'throughput' | 'synchronous'; value: number | string };
  metrics: Partial<Record<'ttftMs' | 'itlMs' | 'tpotMs' | 'e2eS' | 'reqPerS' | 'outputTokPerS' | 'totalTokPerS', number>>;
  metricStat: Record<string, string>;
  metricsExtra?: Record<string, number>;
  notes?: string;
  trust?: string;
}

/** "T01 TRT-LLM perf-overview …" → "T01". */
export function corpusTableId(row: Pick<CorpusRow, 'tableGroup'>): string {
  return /^(T\d+)/.exec(row.tableGroup)?.[1] ?? row.tableGroup;
}

/** The model id without the file's notes: "[table says …]", "(-Instruct)", "(page: …)", ", dummy weights". */
export function corpusModelName(row: Pick<CorpusRow, 'model'>): string {
  return row.model
    .replace(/\s*\[.*$/, '')
    .replace(/\([^)]*\)/g, '')
    .replace(/,.*$/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

const GPU_NORM: Record<string, string> = {
  'A100-80GB': 'A100-80GB', H100: 'H100', H200: 'H200', GH200: 'GH200', H20: 'H20', L40S: 'L40S',
  RTX3090: 'RTX-3090', RTX4090: 'RTX-4090',
};

/** The catalog GPU of a row (its normalized column; the source's wording resolves too, see the corpus test). */
export function corpusGpu(row: Pick<CorpusRow, 'gpuNorm'>): string {
  return GPU_NORM[row.gpuNorm] ?? row.gpuNorm;
}

/** The source's GPU wording without notes in parentheses ("H200 (doc: …)" → "H200"). */
export function corpusGpuWording(row: Pick<CorpusRow, 'gpu'>): string {
  return row.gpu.replace(/\([^)]*\)/g, '').trim();
}

/** Whether a vLLM V0 row's release ("0.4.2") comes before 0.minor.patch; false for other engines and unstated versions. */
function vllmV0Before(row: Pick<CorpusRow, 'engine' | 'engineVersion'>, minor: number, patch: number): boolean {
  const m = /^0\.(\d+)\.(\d+)/.exec(row.engineVersion.trim());
  if (corpusEngine(row) !== 'vllm-v0' || !m) return false;
  return Number(m[1]) < minor || (Number(m[1]) === minor && Number(m[2]) < patch);
}

/**
 * vLLM V0 before 0.5.3 ran MoE models on fused-MoE kernels without tuned configurations (Qwen2-57B-A14B decoded at
 * 32 ms per token on 2× A100 under 0.4.2, 13 ms under later releases in seed 003): 'legacy' for those rows. Their AWQ
 * rows keep the modern constants: 0.4.x decodes on AWQ's own GEMM but prefills through dequantization and fp16
 * GEMMs, neither vLLM 0.2's kernels (legacy:awq, fitted on seed 004) nor Marlin.
 */
export function corpusKernels(row: Pick<CorpusRow, 'engine' | 'engineVersion' | 'model'>): 'legacy' | undefined {
  return vllmV0Before(row, 5, 3) && findModel(corpusModelName(row)).spec.moe !== undefined ? 'legacy' : undefined;
}

/**
 * vLLM V0 releases before 0.5.4 never turn chunked prefill on by themselves (0.5.4 does above a 32K context:
 * vllm-project/vllm#6666): false for them, undefined (the profile's default) otherwise.
 */
export function corpusChunkedPrefill(row: Pick<CorpusRow, 'engine' | 'engineVersion'>): false | undefined {
  return vllmV0Before(row, 5, 4) ? false : undefined;
}

/**
 * The engine profile for a row: TensorRT-LLM served by itself (trtllm-bench/-serve) or behind Triton;
 * vLLM by era (0.2 legacy; 0.4–0.6 V0; unstated versions: the current V1); SGLang; LMDeploy; MLC-LLM.
 */
export function corpusEngine(row: Pick<CorpusRow, 'engine' | 'engineVersion'>): string {
  const e = row.engine.toLowerCase();
  const v = row.engineVersion.toLowerCase();
  if (e.includes('tensorrt') || e.startsWith('trt')) return e.includes('triton') || v.includes('triton') ? 'triton' : 'trtllm';
  if (e.startsWith('vllm')) {
    if (/^0\.[0-3]\./.test(v)) return 'vllm-legacy';
    if (/^0\.[4-6]\./.test(v) || v.includes('v0.6') || v.includes('0.6.x')) return 'vllm-v0';
    return 'vllm';
  }
  if (e.startsWith('sglang')) return 'sglang';
  if (e.startsWith('lmdeploy')) return 'lmdeploy';
  if (e.startsWith('mlc')) return 'mlc-llm';
  return e;
}

/** Weight quantization and KV-cache type of a row, from its quant column and the model id's suffix. */
export function corpusQuant(row: Pick<CorpusRow, 'quant' | 'model'>): { quant: QuantName; kvCacheDtype: KvCacheDtype } {
  const q = row.quant.toLowerCase();
  // NVIDIA's ModelOpt checkpoints (nvidia/…-FP8, T03) need nothing here: the catalog implies their FP8 KV cache from the name.
  const kvCacheDtype: KvCacheDtype = /fp8 kv/.test(q) ? 'fp8' : /kv cache int8/.test(q) ? 'int8' : 'auto';
  let quant: QuantName = q.startsWith('bf16') || q.includes('bf16 presumed') ? 'bf16' : 'fp16';
  if (/\bfp8\b/.test(q)) quant = 'fp8';
  else if (/gptq-?int4/.test(q)) quant = 'gptq-int4';
  else if (/gptq-?int8/.test(q)) quant = 'gptq-int8';
  else if (/\bawq\b|awq-int4/.test(q)) quant = 'awq';
  else if (/q4f16/.test(q)) quant = 'gptq-int4';
  return { quant, kvCacheDtype };
}
