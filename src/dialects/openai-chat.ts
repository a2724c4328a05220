import { OpenAiParser, openAiBody } from './_openai.js';
import { errorMessage, jsonHeaders } from './_shared.js';
import type { Dialect, GenerationRequest, HttpRequestPlan, StreamParser } from './types.js';

/** POST /v1/chat/completions on any OpenAI-compatible server (vLLM, SGLang, lmdeploy, llama.cpp, TGI, Ollama, OpenAI). */
export const openaiChat: Dialect = {
  name: 'openai-chat',
  canForceLength: true,
  buildRequest(req: GenerationRequest): HttpRequestPlan {
    return {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: jsonHeaders(req.stream),
      body: JSON.stringify(openAiBody(req, true)),
      framing: req.stream ? 'sse' : 'json',
    };
  },
  createParser(req?: GenerationRequest): StreamParser {
    return new OpenAiParser(req);
  },
  errorMessage,
};
