/** @module dialects — one pure request builder + stream parser per HTTP API, and engine detection. */
import { configError } from '../core/errors.js';
import { llamacpp } from './llamacpp.js';
import { lmdeploy } from './lmdeploy.js';
import { ollama } from './ollama.js';
import { openaiChat } from './openai-chat.js';
import { openaiCompletions } from './openai-completions.js';
import { openaiEmbeddings } from './openai-embeddings.js';
import { sglang } from './sglang.js';
import { teiEmbeddings } from './tei-embeddings.js';
import { tgi } from './tgi.js';
import { triton } from './triton.js';
import type { ApiName, Dialect } from './types.js';
export { type DetectedEngine, type DetectOptions, type EngineName, detectEngine, listModels } from './detect.js';
import { vllmLegacy } from './vllm-legacy.js';

export type {
  ApiName,
  ChatMessage,
  Dialect,
  FrameEvent,
  Framing,
  GenerationRequest,
  HttpRequestPlan,
  StreamParser,
  TokenCountSource,
  UsageInfo,
} from './types.js';

export const dialects: Readonly<Record<ApiName, Dialect>> = {
  'openai-chat': openaiChat,
  'openai-completions': openaiCompletions,
  vllm: vllmLegacy,
  tgi,
  sglang,
  lmdeploy,
  llamacpp,
  triton,
  ollama,
  'openai-embeddings': openaiEmbeddings,
  'tei-embeddings': teiEmbeddings,
};

export const apiNames = Object.keys(dialects) as ApiName[];

export function isApiName(name: string): name is ApiName {
  return Object.hasOwn(dialects, name);
}

/** The dialect for `name`; unknown names are a config error that lists the valid ones. */
/** APIs whose replies are vectors (`--api openai-embeddings | tei-embeddings`), never chosen by `--api auto`. */
export function isEmbeddingsApi(name: string): boolean {
  return isApiName(name) && dialects[name].embeddings === true;
}

export function getDialect(name: string): Dialect {
  if (!isApiName(name)) {
    throw configError(`unknown API "${name}"`, `use one of: ${apiNames.join(', ')}`);
  }
  return dialects[name];
}
