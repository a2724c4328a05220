import type { ModelSpec, VisionSpec } from './types.js';

/**
 * Vision-language models people serve. The language model's numbers come from each model's config.json (text_config
 * where it has one), the image rules from its processor: Qwen2-VL's `smart_resize` and preprocessor_config.json
 * (patch 14, merge 2, min_pixels 3136, max_pixels 12845056), LLaVA-1.5's CLIP ViT-L/14 at 336² (576 tokens), LLaVA-NeXT's
 * anyres grid (HF LlavaNextProcessor._get_number_of_features), Gemma 3's SigLIP at 896² pooled to 256 tokens
 * (Gemma3Processor.full_image_sequence "\n\n<start_of_image>" + 256 + "<end_of_image>\n\n").
 */

/** Qwen2-VL / Qwen2.5-VL ViT: 32 blocks of width 1280 (~629M) plus the 2×2 patch merger into the LLM's width. */
const qwenVision = (hidden: number): VisionSpec => ({
  kind: 'qwen2-vl',
  encoderParams: 629e6 + 5120 * (5120 + hidden),
  patchSize: 14,
  mergeSize: 2,
  minPixels: 56 * 56,
  maxPixels: 16384 * 28 * 28,
  // <|vision_start|> and <|vision_end|> around the <|image_pad|> tokens
  extraTokens: 2,
});

/** CLIP ViT-L/14-336 (303M) and LLaVA's two-layer projector into 4096. */
const CLIP_336_PARAMS = 303e6 + 1024 * 4096 + 4096 * 4096;

/** Gemma 3 (4B and up): SigLIP so400m at 896² = 4096 patches of 14², average-pooled 4×4 to 256 soft tokens. */
export const GEMMA3_VISION: VisionSpec = { kind: 'fixed', encoderParams: 417e6, tokens: 256, patches: 4096, extraTokens: 4 };

const qwen = (
  name: string, aliases: string[], layers: number, hidden: number, heads: number, kvHeads: number, ffn: number, maxModelLen: number, source: string,
): ModelSpec => ({
  name, aliases, layers, hidden, heads, kvHeads, headDim: 128, ffn, vocab: 152064, tiedEmbeddings: false, maxModelLen, vision: qwenVision(hidden), source,
});

export const VISION_MODELS: ModelSpec[] = [
  qwen('Qwen2-VL-7B-Instruct', ['Qwen2-VL-7B'], 28, 3584, 28, 4, 18944, 32768, 'HF Qwen/Qwen2-VL-7B-Instruct'),
  qwen('Qwen2.5-VL-7B-Instruct', ['Qwen2.5-VL-7B'], 28, 3584, 28, 4, 18944, 128000, 'HF Qwen/Qwen2.5-VL-7B-Instruct'),
  qwen('Qwen2.5-VL-32B-Instruct', ['Qwen2.5-VL-32B'], 64, 5120, 40, 8, 27648, 128000, 'HF Qwen/Qwen2.5-VL-32B-Instruct'),
  qwen('Qwen2.5-VL-72B-Instruct', ['Qwen2.5-VL-72B'], 80, 8192, 64, 8, 29568, 128000, 'HF Qwen/Qwen2.5-VL-72B-Instruct'),
  {
    name: 'LLaVA-1.5-7B', aliases: ['llava-1.5-7b-hf', 'llava-v1.5-7b'],
    layers: 32, hidden: 4096, heads: 32, kvHeads: 32, headDim: 128, ffn: 11008, vocab: 32064,
    tiedEmbeddings: false, maxModelLen: 4096,
    // 577 patches (576 + CLS) in, 576 tokens out, which replace the <image> placeholder
    vision: { kind: 'fixed', encoderParams: CLIP_336_PARAMS, tokens: 576, patches: 577, extraTokens: 0 },
    source: 'HF llava-hf/llava-1.5-7b-hf (Vicuna-7B v1.5)',
  },
  {
    name: 'LLaVA-v1.6-Mistral-7B', aliases: ['llava-v1.6-mistral-7b-hf', 'llava-v1.6-mistral-7b', 'LLaVA-NeXT-Mistral-7B'],
    layers: 32, hidden: 4096, heads: 32, kvHeads: 8, headDim: 128, ffn: 14336, vocab: 32064,
    tiedEmbeddings: false, maxModelLen: 32768,
    vision: {
      kind: 'llava-next', encoderParams: CLIP_336_PARAMS, crop: 336, patchSize: 14,
      pinpoints: [[336, 672], [672, 336], [672, 672], [1008, 336], [336, 1008]],
    },
    source: 'HF llava-hf/llava-v1.6-mistral-7b-hf (Mistral-7B-Instruct-v0.2)',
  },
];
