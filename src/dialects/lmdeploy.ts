import { MetaInfoParser } from './sglang.js';
import { type Json, errorMessage, sseOrJsonPost, mergeExtra } from './_shared.js';
import type { Dialect, GenerationRequest, HttpRequestPlan, StreamParser } from './types.js';

/**
 * LMDeploy native POST /generate (v0.11+): SSE of `{text, output_ids, meta_info}` with per-event text
 * deltas and a cumulative `meta_info.completion_tokens`, then [DONE] — exact counts on every event and
 * no chat template. forceLength sends `ignore_eos` (this route has no min_new_tokens). Older lmdeploy
 * (<0.11) has no /generate: use openai-chat, whose parser handles all three chat-stream generations.
 */
export const lmdeploy: Dialect = {
  name: 'lmdeploy',
  canForceLength: true,
  buildRequest(req: GenerationRequest): HttpRequestPlan {
    const body: Json = { prompt: req.prompt, max_tokens: req.maxTokens, stream: req.stream };
    if (req.forceLength) body['ignore_eos'] = true;
    return sseOrJsonPost('/generate', mergeExtra(body, req.extraBody), req.stream);
  },
  createParser(req?: GenerationRequest): StreamParser {
    return new MetaInfoParser(req, false);
  },
  errorMessage,
};
