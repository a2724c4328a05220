import { OpenAiParser, openAiBody } from './_openai.js';
import { errorMessage, sseOrJsonPost } from './_shared.js';
import type { Dialect, GenerationRequest, HttpRequestPlan, StreamParser } from './types.js';

/** POST /v1/completions: the prompt goes in as-is (no chat template), so prompt token counts stay exact. */
export const openaiCompletions: Dialect = {
  name: 'openai-completions',
  canForceLength: true,
  buildRequest(req: GenerationRequest): HttpRequestPlan {
    return sseOrJsonPost('/v1/completions', openAiBody(req, false), req.stream);
  },
  createParser(req?: GenerationRequest): StreamParser {
    return new OpenAiParser(req);
  },
  errorMessage,
};
