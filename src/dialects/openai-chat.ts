import { OpenAiParser, openAiBody } from './_openai.js';
import { errorMessage, sseOrJsonPost } from './_shared.js';
import type { Dialect, GenerationRequest, HttpRequestPlan, StreamParser } from './types.js';

/** POST /v1/chat/completions on any OpenAI-compatible server (vLLM, SGLang, lmdeploy, llama.cpp, TGI, Ollama, OpenAI). */
export const openaiChat: Dialect = {
  name: 'openai-chat',
  canForceLength: true,
  buildRequest(req: GenerationRequest): HttpRequestPlan {
    return sseOrJsonPost('/v1/chat/completions', openAiBody(req, true), req.stream);
  },
  createParser(req?: GenerationRequest): StreamParser {
    return new OpenAiParser(req);
  },
  errorMessage,
};
