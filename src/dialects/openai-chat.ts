import { OpenAiParser, openAiBody } from './_openai.js';
import { imagePlaceholders, spliceImages } from './_images.js';
import { errorMessage, sseOrJsonPost } from './_shared.js';
import type { Dialect, GenerationRequest, HttpRequestPlan, StreamParser } from './types.js';

/** POST /v1/chat/completions on any OpenAI-compatible server (vLLM, SGLang, lmdeploy, llama.cpp, TGI, Ollama, OpenAI). */
export const openaiChat: Dialect = {
  name: 'openai-chat',
  canForceLength: true,
  buildRequest(req: GenerationRequest): HttpRequestPlan {
    const images = req.images;
    if (!images || images.length === 0) return sseOrJsonPost('/v1/chat/completions', openAiBody(req, true), req.stream);
    // Images as image_url parts; their data URLs join the JSON after it is written (_images.ts).
    const plan = sseOrJsonPost('/v1/chat/completions', openAiBody({ ...req, images: imagePlaceholders(images) }, true), req.stream);
    return { ...plan, ...spliceImages(plan.body, images) };
  },
  createParser(req?: GenerationRequest): StreamParser {
    return new OpenAiParser(req);
  },
  errorMessage,
};
