import { kvElementBytes } from './hardware.js';
import { RECENT_MODELS } from './models-recent.js';
import { VISION_MODELS } from './models-vision.js';
import type { KvCacheDtype, ModelDerived, ModelSpec } from './types.js';

/** Architecture numbers from the models' HF config.json files (research/simulator.md §4). */
const llama2_7b: ModelSpec = {
  name: 'Llama-2-7B', aliases: ['Llama-2-7b-hf', 'Llama-2-7b-chat-hf', 'Llama-2-7B-Chat', 'llama2-7b', 'llama-2-7b-chat'],
  layers: 32, hidden: 4096, heads: 32, kvHeads: 32, headDim: 128, ffn: 11008, vocab: 32000,
  tiedEmbeddings: false, maxModelLen: 4096, source: 'HF meta-llama/Llama-2-7b-hf',
};
const llama3_8b: ModelSpec = {
  name: 'Llama-3-8B', aliases: ['Meta-Llama-3-8B', 'Meta-Llama-3-8B-Instruct', 'Llama-3-8B-Instruct'],
  layers: 32, hidden: 4096, heads: 32, kvHeads: 8, headDim: 128, ffn: 14336, vocab: 128256,
  tiedEmbeddings: false, maxModelLen: 8192, source: 'HF meta-llama/Meta-Llama-3-8B',
};
const llama3_70b: ModelSpec = {
  name: 'Llama-3-70B', aliases: ['Meta-Llama-3-70B', 'Meta-Llama-3-70B-Instruct', 'Llama-3-70B-Instruct'],
  layers: 80, hidden: 8192, heads: 64, kvHeads: 8, headDim: 128, ffn: 28672, vocab: 128256,
  tiedEmbeddings: false, maxModelLen: 8192, source: 'HF meta-llama/Meta-Llama-3-70B',
};
const mistral7b: ModelSpec = {
  name: 'Mistral-7B', aliases: ['Mistral-7B-v0.1', 'Mistral-7B-v0.3', 'Mistral 7B'],
  layers: 32, hidden: 4096, heads: 32, kvHeads: 8, headDim: 128, ffn: 14336, vocab: 32000,
  tiedEmbeddings: false, maxModelLen: 32768, source: 'HF mistralai/Mistral-7B-v0.1 (sliding_window 4096)',
};
const qwen2_72b: ModelSpec = {
  name: 'Qwen2-72B-Instruct', aliases: ['Qwen2-72B'],
  layers: 80, hidden: 8192, heads: 64, kvHeads: 8, headDim: 128, ffn: 29568, vocab: 152064,
  tiedEmbeddings: false, maxModelLen: 32768, source: 'HF Qwen/Qwen2-72B-Instruct',
};

export const BUILTIN_MODELS: ModelSpec[] = [
  {
    name: 'Qwen2-7B-Instruct', aliases: ['Qwen2-7B'],
    layers: 28, hidden: 3584, heads: 28, kvHeads: 4, headDim: 128, ffn: 18944, vocab: 152064,
    tiedEmbeddings: false, maxModelLen: 32768, source: 'HF Qwen/Qwen2-7B-Instruct',
  },
  {
    // Qwen1 configs list intermediate_size = 2x the per-matrix FFN width (27392 -> 13696).
    name: 'Qwen-14B', aliases: ['Qwen-14B-Chat'],
    layers: 40, hidden: 5120, heads: 40, kvHeads: 40, headDim: 128, ffn: 13696, vocab: 152064,
    tiedEmbeddings: false, maxModelLen: 2048, source: 'HF Qwen/Qwen-14B (seq_length 2048)',
  },
  {
    name: 'chatglm3-6b', aliases: ['chatglm3-6b-32k'],
    layers: 28, hidden: 4096, heads: 32, kvHeads: 2, headDim: 128, ffn: 13696, vocab: 65024,
    tiedEmbeddings: false, maxModelLen: 8192, source: 'HF THUDM/chatglm3-6b (multi_query_group_num 2)',
  },
  qwen2_72b,
  {
    name: 'Qwen2-MoE-57B-A14B-Instruct',
    aliases: ['Qwen2-57B-A14B', 'Qwen2-57B-A14B-Instruct', 'Qwen2-MoE-57B-A14B'],
    layers: 28, hidden: 3584, heads: 28, kvHeads: 4, headDim: 128, ffn: 18944, vocab: 151936,
    tiedEmbeddings: false, maxModelLen: 32768,
    moe: { experts: 64, activeExperts: 8, expertFfn: 2560, sharedExpertFfn: 20480 },
    source: 'HF Qwen/Qwen2-57B-A14B (qwen2_moe, every layer MoE)',
  },
  mistral7b,
  {
    ...mistral7b, name: 'Mistral-7B-Instruct', maxModelLen: 32768,
    aliases: ['Mistral-7B-Instruct-v0.1', 'Mistral-7B-Instruct-v0.2', 'Mistral-7B-Instruct-v0.3'],
    source: 'HF mistralai/Mistral-7B-Instruct-v0.2',
  },
  { ...mistral7b, name: 'Mistral-7B-OpenOrca', aliases: [], source: 'HF Open-Orca/Mistral-7B-OpenOrca (Mistral-7B)' },
  llama2_7b,
  {
    name: 'Llama-2-13B', aliases: ['Llama-2-13b-hf', 'Llama-2-13b-chat-hf', 'Llama-2-13B-Chat', 'llama2-13b', 'llama-2-13b-chat'],
    layers: 40, hidden: 5120, heads: 40, kvHeads: 40, headDim: 128, ffn: 13824, vocab: 32000,
    tiedEmbeddings: false, maxModelLen: 4096, source: 'HF meta-llama/Llama-2-13b-hf',
  },
  {
    name: 'Llama-2-70B', aliases: ['Llama-2-70b-hf', 'Llama-2-70b-chat-hf', 'Llama-2-70B-Chat', 'llama2-70b', 'llama-2-70b-chat'],
    layers: 80, hidden: 8192, heads: 64, kvHeads: 8, headDim: 128, ffn: 28672, vocab: 32000,
    tiedEmbeddings: false, maxModelLen: 4096, source: 'HF meta-llama/Llama-2-70b-hf',
  },
  llama3_8b,
  llama3_70b,
  {
    ...llama3_8b, name: 'Llama-3.1-8B', maxModelLen: 131072,
    aliases: ['Meta-Llama-3.1-8B', 'Meta-Llama-3.1-8B-Instruct', 'Llama-3.1-8B-Instruct', 'LLaMA v3.1 8B'],
    source: 'HF meta-llama/Llama-3.1-8B (same architecture as Llama-3-8B, 128k context)',
  },
  {
    ...llama3_70b, name: 'Llama-3.1-70B', maxModelLen: 131072,
    aliases: ['Meta-Llama-3.1-70B', 'Meta-Llama-3.1-70B-Instruct', 'Llama-3.1-70B-Instruct', 'LLaMA v3.1 70B'],
    source: 'HF meta-llama/Llama-3.1-70B (same architecture as Llama-3-70B, 128k context)',
  },
  {
    ...llama3_70b, name: 'Llama-3.3-70B', maxModelLen: 131072, aliases: ['Llama-3.3-70B-Instruct'],
    source: 'HF meta-llama/Llama-3.3-70B-Instruct (Llama-3.1-70B architecture)',
  },
  {
    name: 'Baichuan2-13B', aliases: ['Baichuan2-13B-Chat'],
    layers: 40, hidden: 5120, heads: 40, kvHeads: 40, headDim: 128, ffn: 13696, vocab: 125696,
    tiedEmbeddings: false, maxModelLen: 4096, source: 'HF baichuan-inc/Baichuan2-13B',
  },
  ...RECENT_MODELS,
  ...VISION_MODELS,
];

export function deriveModel(m: ModelSpec): ModelDerived {
  const attn = m.hidden * m.heads * m.headDim * 2 + 2 * m.hidden * m.kvHeads * m.headDim;
  const embeddingParams = m.vocab * m.hidden;
  const headParams = m.tiedEmbeddings ? 0 : embeddingParams;
  let mlp: number;
  let experts = 0;
  let ffnActive: number;
  if (m.moe) {
    // Per-layer averages when only some layers are MoE (the rest carry a dense MLP of width denseFfn).
    const share = moeLayerShare(m);
    const dense = (1 - share) * 3 * m.hidden * (m.moe.denseFfn ?? 0);
    mlp = share * (3 * m.hidden * m.moe.sharedExpertFfn + m.hidden * m.moe.experts) + dense;
    experts = share * m.moe.experts * 3 * m.hidden * m.moe.expertFfn;
    ffnActive = share * (m.moe.sharedExpertFfn + m.moe.activeExperts * m.moe.expertFfn) + (1 - share) * (m.moe.denseFfn ?? 0);
  } else {
    mlp = 3 * m.hidden * m.ffn;
    ffnActive = m.ffn;
  }
  const totalParams = m.layers * (attn + mlp + experts) + embeddingParams + headParams;
  return {
    attnParamsPerLayer: attn,
    mlpParamsPerLayer: mlp,
    expertParamsPerLayer: experts,
    embeddingParams,
    headParams,
    totalParams,
    ffnActive,
  };
}

/** Share of the layers that route through experts (1 unless `moe.moeLayers` says fewer). */
export function moeLayerShare(m: ModelSpec): number {
  if (!m.moe) return 0;
  return Math.min(1, (m.moe.moeLayers ?? m.layers) / m.layers);
}

/** KV-cache bytes per token per layer per GPU at tensor-parallel degree `tp`. */
export function kvBytesPerTokenPerLayer(m: ModelSpec, tp: number, kvDtype?: KvCacheDtype): number {
  const bytes = kvElementBytes(kvDtype);
  // MLA keeps one latent vector per token, replicated on every rank; MHA/GQA split KV heads (replicated below 1 per rank).
  if (m.kvLatentDim) return m.kvLatentDim * bytes;
  return 2 * Math.max(1, m.kvHeads / tp) * m.headDim * bytes;
}

/** KV-cache bytes per token per GPU at tensor-parallel degree `tp` (16-bit cache unless `kvDtype` says otherwise). */
export function kvBytesPerTokenPerGpu(m: ModelSpec, tp: number, kvDtype?: KvCacheDtype): number {
  return m.layers * kvBytesPerTokenPerLayer(m, tp, kvDtype);
}
