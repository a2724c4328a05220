import { DEFAULT_SIM } from '../sim/default-sim.js';
import type { ApiName } from '../dialects/types.js';
import { findModel, listModels } from '../sim/catalog/index.js';
import { DEFAULT_IMAGE_SIZE, type ImageSpec } from '../workload/images.js';
import { parseNumber, type Problems } from './parse.js';
import type { RunOptions } from './options.js';

/** APIs whose requests carry images: OpenAI chat content parts, and Ollama's native chat. */
export const IMAGE_APIS: readonly ApiName[] = ['openai-chat', 'ollama'];

/** Largest side `--image-size` takes: beyond it every model resizes the image down anyway. */
const MAX_SIDE = 8192;
/** More images per request than any served model takes by default (vLLM's --limit-mm-per-prompt is 1 by default). */
const MAX_IMAGES = 64;

/** Why `api` cannot send images, as one line; undefined when it can. */
export function imageApiProblem(api: string): string | undefined {
  if ((IMAGE_APIS as readonly string[]).includes(api)) return undefined;
  return `--images needs a chat API that carries images; --api ${api} sends text only: use --api openai-chat (vLLM, SGLang, TGI, lmdeploy, llama.cpp, trtllm-serve) or --api ollama`;
}

/**
 * With images, an API detected as a text-only route of a server that also has the OpenAI chat route (vLLM, SGLang
 * and llama.cpp completions, TGI and lmdeploy natives) is swapped for openai-chat; the others stay and are refused.
 */
export function imageApiFor(api: ApiName): ApiName {
  return api === 'openai-completions' || api === 'tgi' || api === 'sglang' || api === 'lmdeploy' || api === 'llamacpp' ? 'openai-chat' : api;
}

/** Catalog models that read images. */
function visionModels(): string[] {
  return listModels().filter((m) => findModel(m).spec.vision !== undefined);
}

function parseImageSize(raw: string, p: Problems): { width: number; height: number } | undefined {
  const m = /^\s*(\d+)\s*[x×]\s*(\d+)\s*$/i.exec(raw);
  const width = Number(m?.[1]);
  const height = Number(m?.[2]);
  if (!m || !(width >= 1 && width <= MAX_SIDE && height >= 1 && height <= MAX_SIDE)) {
    p.push(`--image-size ${JSON.stringify(raw)} is not WIDTHxHEIGHT in pixels (1–${MAX_SIDE} each); write it like --image-size 1024x768`);
    return undefined;
  }
  return { width, height };
}

/**
 * `--images N --image-size WxH`: the images every request carries, with every problem named (the API is checked
 * once known). `--image-size` without `--images` is the flag table's check (config/flags/workload.ts).
 */
export function resolveImageOptions(
  raw: { images?: string | undefined; imageSize?: string | undefined },
  opts: Pick<RunOptions, 'api' | 'workload' | 'target' | 'model'>,
  p: Problems,
): ImageSpec | undefined {
  if (raw.images === undefined) return undefined;
  const count = parseNumber('--images', raw.images, p, { integer: true, positive: true });
  const size = raw.imageSize === undefined ? DEFAULT_IMAGE_SIZE : parseImageSize(raw.imageSize, p);
  if (count !== undefined && count > MAX_IMAGES) p.push(`--images ${count}: at most ${MAX_IMAGES} images per request`);
  if (opts.api !== 'auto') {
    const problem = imageApiProblem(opts.api);
    if (problem) p.push(problem);
  }
  if (opts.workload.turns) p.push('--images does not go with --turns yet: conversations resend their history as text; benchmark single-turn requests with images');
  if (opts.target === undefined) {
    // The built-in simulator would answer every image of a text-only model with a 400: say so before the run.
    const model = opts.model ?? DEFAULT_SIM.model;
    let vision: boolean | undefined;
    try {
      vision = findModel(model).spec.vision !== undefined;
    } catch {
      // an unknown model is reported where the simulator starts
    }
    if (vision === false) p.push(`--images: the simulated ${model} is a text-only model; simulate a vision one with --model (${visionModels().join(', ')})`);
  }
  if (count === undefined || size === undefined || count > MAX_IMAGES) return undefined;
  return { count, width: size.width, height: size.height };
}
