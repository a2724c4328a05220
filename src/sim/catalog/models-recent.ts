import { GEMMA3_VISION } from './models-vision.js';
import type { ModelSpec } from './types.js';

/**
 * The families people deploy today, from each model's Hugging Face config.json (hidden_size,
 * num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, intermediate_size or
 * moe_intermediate_size, vocab_size, tie_word_embeddings, max_position_embeddings). Sliding-window and
 * local/global attention patterns (Mistral, Gemma-2/3) are not modelled: every layer attends to the whole context.
 */
const dense = (
  name: string, aliases: string[], layers: number, hidden: number, heads: number, kvHeads: number, headDim: number,
  ffn: number, vocab: number, tiedEmbeddings: boolean, maxModelLen: number, source: string,
): ModelSpec => ({ name, aliases, layers, hidden, heads, kvHeads, headDim, ffn, vocab, tiedEmbeddings, maxModelLen, source });

const llama31_405b = dense(
  'Llama-3.1-405B', ['Meta-Llama-3.1-405B', 'Llama-3.1-405B-Instruct', 'Meta-Llama-3.1-405B-Instruct', 'LLaMA v3.1 405B',
    'Hermes-3-Llama-3.1-405B'],
  126, 16384, 128, 8, 128, 53248, 128256, false, 131072, 'HF meta-llama/Llama-3.1-405B',
);

const qwen3 = (size: string, layers: number, hidden: number, heads: number, ffn: number, tied: boolean): ModelSpec =>
  dense(`Qwen3-${size}`, [`Qwen3-${size}-Base`], layers, hidden, heads, 8, 128, ffn, 151936, tied, 40960, `HF Qwen/Qwen3-${size}`);

const qwen25 = (size: string, layers: number, hidden: number, heads: number, kv: number, headDim: number, ffn: number, tied: boolean, vocab = 152064): ModelSpec =>
  dense(`Qwen2.5-${size}`, [`Qwen2.5-${size}-Instruct`], layers, hidden, heads, kv, headDim, ffn, vocab, tied, 32768, `HF Qwen/Qwen2.5-${size}-Instruct`);

const gemma = (name: string, layers: number, hidden: number, heads: number, kv: number, headDim: number, ffn: number, vocab: number, len: number): ModelSpec =>
  dense(name, [`${name}-it`, `gemma-${name.slice(6).toLowerCase()}`], layers, hidden, heads, kv, headDim, ffn, vocab, true, len, `HF google/${name.toLowerCase()}`);

export const RECENT_MODELS: ModelSpec[] = [
  // Llama 3.x
  dense('Llama-3.2-1B', ['Llama-3.2-1B-Instruct'], 16, 2048, 32, 8, 64, 8192, 128256, true, 131072, 'HF meta-llama/Llama-3.2-1B'),
  dense('Llama-3.2-3B', ['Llama-3.2-3B-Instruct'], 28, 3072, 24, 8, 128, 8192, 128256, true, 131072, 'HF meta-llama/Llama-3.2-3B'),
  llama31_405b,
  {
    // 48 layers alternate dense (intermediate_size_mlp 16384) and MoE (128 routed experts of 8192, top-1, plus a shared expert).
    name: 'Llama-4-Maverick-17B-128E', aliases: ['Llama-4-Maverick', 'Llama-4-Maverick-17B-128E-Instruct'],
    layers: 48, hidden: 5120, heads: 40, kvHeads: 8, headDim: 128, ffn: 16384, vocab: 202048,
    tiedEmbeddings: false, maxModelLen: 1048576,
    moe: { experts: 128, activeExperts: 1, expertFfn: 8192, sharedExpertFfn: 8192, moeLayers: 24, denseFfn: 16384 },
    source: 'HF meta-llama/Llama-4-Maverick-17B-128E-Instruct (interleave_moe_layer_step 2)',
  },
  {
    name: 'Llama-4-Scout-17B-16E', aliases: ['Llama-4-Scout', 'Llama-4-Scout-17B-16E-Instruct'],
    layers: 48, hidden: 5120, heads: 40, kvHeads: 8, headDim: 128, ffn: 8192, vocab: 202048,
    tiedEmbeddings: false, maxModelLen: 10485760,
    moe: { experts: 16, activeExperts: 1, expertFfn: 8192, sharedExpertFfn: 8192 },
    source: 'HF meta-llama/Llama-4-Scout-17B-16E-Instruct (every layer MoE)',
  },
  // Mistral / Mixtral
  dense('Mistral-Nemo-2407', ['Mistral-Nemo', 'Mistral-Nemo-Base-2407', 'Mistral-Nemo-Instruct-2407'],
    40, 5120, 32, 8, 128, 14336, 131072, false, 131072, 'HF mistralai/Mistral-Nemo-Instruct-2407 (context capped at 128k)'),
  dense('Mistral-Small-24B', ['Mistral-Small-24B-Instruct-2501', 'Mistral-Small-24B-Base-2501', 'Mistral-Small-3.1-24B-Instruct-2503'],
    40, 5120, 32, 8, 128, 32768, 131072, false, 32768, 'HF mistralai/Mistral-Small-24B-Instruct-2501'),
  dense('Mistral-Large-2407', ['Mistral-Large-Instruct-2407', 'Mistral-Large-2'],
    88, 12288, 96, 8, 128, 28672, 32768, false, 131072, 'HF mistralai/Mistral-Large-Instruct-2407'),
  {
    name: 'Mixtral-8x7B', aliases: ['Mixtral-8x7B-v0.1', 'Mixtral-8x7B-Instruct-v0.1', 'Mixtral 8x7B'],
    layers: 32, hidden: 4096, heads: 32, kvHeads: 8, headDim: 128, ffn: 14336, vocab: 32000,
    tiedEmbeddings: false, maxModelLen: 32768,
    moe: { experts: 8, activeExperts: 2, expertFfn: 14336, sharedExpertFfn: 0 },
    source: 'HF mistralai/Mixtral-8x7B-Instruct-v0.1',
  },
  {
    name: 'Mixtral-8x22B', aliases: ['Mixtral-8x22B-v0.1', 'Mixtral-8x22B-Instruct-v0.1', 'Mixtral 8x22B'],
    layers: 56, hidden: 6144, heads: 48, kvHeads: 8, headDim: 128, ffn: 16384, vocab: 32768,
    tiedEmbeddings: false, maxModelLen: 65536,
    moe: { experts: 8, activeExperts: 2, expertFfn: 16384, sharedExpertFfn: 0 },
    source: 'HF mistralai/Mixtral-8x22B-Instruct-v0.1',
  },
  // Qwen 1.5 / 2.5 / 3
  dense('Qwen1.5-32B', ['Qwen1.5-32B-Chat'], 64, 5120, 40, 8, 128, 27392, 152064, false, 32768, 'HF Qwen/Qwen1.5-32B-Chat'),
  {
    name: 'Qwen1.5-MoE-A2.7B', aliases: ['Qwen1.5-MoE-A2.7B-Chat'],
    layers: 24, hidden: 2048, heads: 16, kvHeads: 16, headDim: 128, ffn: 5632, vocab: 151936,
    tiedEmbeddings: false, maxModelLen: 8192,
    moe: { experts: 60, activeExperts: 4, expertFfn: 1408, sharedExpertFfn: 5632 },
    source: 'HF Qwen/Qwen1.5-MoE-A2.7B',
  },
  qwen25('0.5B', 24, 896, 14, 2, 64, 4864, true, 151936),
  qwen25('1.5B', 28, 1536, 12, 2, 128, 8960, true, 151936),
  qwen25('3B', 36, 2048, 16, 2, 128, 11008, true, 151936),
  qwen25('7B', 28, 3584, 28, 4, 128, 18944, false),
  qwen25('14B', 48, 5120, 40, 8, 128, 13824, false),
  qwen25('32B', 64, 5120, 40, 8, 128, 27648, false),
  qwen25('72B', 80, 8192, 64, 8, 128, 29568, false),
  qwen3('0.6B', 28, 1024, 16, 3072, true),
  qwen3('1.7B', 28, 2048, 16, 6144, true),
  qwen3('4B', 36, 2560, 32, 9728, true),
  qwen3('8B', 36, 4096, 32, 12288, false),
  qwen3('14B', 40, 5120, 40, 17408, false),
  qwen3('32B', 64, 5120, 64, 25600, false),
  {
    name: 'Qwen3-30B-A3B', aliases: ['Qwen3-30B-A3B-Base', 'Qwen3-30B-A3B-Instruct-2507'],
    layers: 48, hidden: 2048, heads: 32, kvHeads: 4, headDim: 128, ffn: 6144, vocab: 151936,
    tiedEmbeddings: false, maxModelLen: 40960,
    moe: { experts: 128, activeExperts: 8, expertFfn: 768, sharedExpertFfn: 0 },
    source: 'HF Qwen/Qwen3-30B-A3B',
  },
  {
    name: 'Qwen3-235B-A22B', aliases: ['Qwen3-235B-A22B-Instruct-2507'],
    layers: 94, hidden: 4096, heads: 64, kvHeads: 4, headDim: 128, ffn: 12288, vocab: 151936,
    tiedEmbeddings: false, maxModelLen: 40960,
    moe: { experts: 128, activeExperts: 8, expertFfn: 1536, sharedExpertFfn: 0 },
    source: 'HF Qwen/Qwen3-235B-A22B',
  },
  // DeepSeek-V2-Lite-class MoE with multi-head latent attention (first layer dense).
  {
    name: 'DeepSeek-V2-Lite', aliases: ['DeepSeek-V2-Lite-Chat'],
    layers: 27, hidden: 2048, heads: 16, kvHeads: 16, headDim: 128, ffn: 10944, vocab: 102400,
    tiedEmbeddings: false, maxModelLen: 32768, kvLatentDim: 576,
    moe: { experts: 64, activeExperts: 6, expertFfn: 1408, sharedExpertFfn: 2816, moeLayers: 26, denseFfn: 10944 },
    source: 'HF deepseek-ai/DeepSeek-V2-Lite (kv_lora_rank 512 + qk_rope_head_dim 64; attention projections approximated as 16×128 heads)',
  },
  // Gemma 2 / 3 (tied embeddings, 256k vocabularies)
  gemma('Gemma-2-2B', 26, 2304, 8, 4, 256, 9216, 256000, 8192),
  gemma('Gemma-2-9B', 42, 3584, 16, 8, 256, 14336, 256000, 8192),
  gemma('Gemma-2-27B', 46, 4608, 32, 16, 128, 36864, 256000, 8192),
  gemma('Gemma-3-1B', 26, 1152, 4, 1, 256, 6912, 262144, 32768),
  // Gemma 3 from 4B up reads images too (1B is text only).
  { ...gemma('Gemma-3-4B', 34, 2560, 8, 4, 256, 10240, 262208, 131072), vision: GEMMA3_VISION },
  { ...gemma('Gemma-3-12B', 48, 3840, 16, 8, 256, 15360, 262208, 131072), vision: GEMMA3_VISION },
  { ...gemma('Gemma-3-27B', 62, 5376, 32, 16, 128, 21504, 262208, 131072), vision: GEMMA3_VISION },
  // Small models people run on CPUs with llama.cpp (GGUF files of the same names: TinyLlama-1.1B-Chat-v1.0-Q4_K_M.gguf)
  dense('TinyLlama-1.1B', ['TinyLlama-1.1B-Chat-v1.0', 'TinyLlama-1.1B-Chat', 'tinyllama-1.1b-chat-v1.0'],
    22, 2048, 32, 4, 64, 5632, 32000, false, 2048, 'HF TinyLlama/TinyLlama-1.1B-Chat-v1.0'),
  dense('Phi-3-mini-4k', ['Phi-3-mini-4k-instruct', 'Phi-3-mini'],
    32, 3072, 32, 32, 96, 8192, 32064, false, 4096, 'HF microsoft/Phi-3-mini-4k-instruct (sliding_window 2047 not modelled)'),
  // InternLM (LMDeploy's benchmark tables)
  dense('internlm-20b', ['internlm-chat-20b'], 60, 5120, 40, 40, 128, 13824, 103168, false, 4096, 'HF internlm/internlm-chat-20b'),
];
