import {
  type Json,
  NOT_JSON,
  count,
  errorMessage,
  errorOf,
  isObj,
  mergeExtra,
  normFinish,
  parseErrorEvent,
  parseObject,
  str,
} from './_shared.js';
import { finishFailure } from './_finish.js';
import type { Dialect, FrameEvent, GenerationRequest, HttpRequestPlan, StreamParser } from './types.js';

/**
 * Ollama native POST /api/generate: NDJSON ending with a `"done":true` object that carries
 * `eval_count` / `prompt_eval_count` (omitted when 0) and ns durations. `raw:true` sends the prompt
 * untemplated (exact prompt tokens, no `context` array in the reply). Length cannot be forced:
 * `options.num_predict` is only a cap.
 */
export const ollama: Dialect = {
  name: 'ollama',
  canForceLength: false,
  buildRequest(req: GenerationRequest): HttpRequestPlan {
    const body: Json = {
      model: req.model,
      prompt: req.prompt,
      raw: true,
      stream: req.stream,
      options: { num_predict: req.maxTokens },
    };
    return {
      method: 'POST',
      path: '/api/generate',
      headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
      body: JSON.stringify(mergeExtra(body, req.extraBody)),
      framing: req.stream ? 'ndjson' : 'json',
    };
  },
  createParser(): StreamParser {
    return new OllamaParser();
  },
  errorMessage,
};

/** Also reads /api/chat objects (`message.content`). */
class OllamaParser implements StreamParser {
  frame(payload: string): FrameEvent | null {
    const v = parseObject(payload);
    if (v === NOT_JSON || !isObj(v)) return parseErrorEvent(payload);
    const err = errorOf(v);
    if (err !== undefined) return { error: err };
    const ev: FrameEvent = {};
    const message = v['message'];
    const thinking = (str(v['thinking']) ?? '') + (isObj(message) ? (str(message['thinking']) ?? '') : '');
    const text = thinking + (str(v['response']) ?? (isObj(message) ? (str(message['content']) ?? '') : ''));
    if (text !== '') ev.text = text;
    if (thinking !== '') ev.reasoning = thinking;
    if (v['done'] === true) {
      ev.done = true;
      const finish = normFinish(v['done_reason']);
      if (finish !== undefined) ev.finishReason = finish;
      const failed = finishFailure(finish);
      if (failed !== undefined) ev.error = failed;
      // omitempty: a missing eval_count means 0; a missing prompt_eval_count may be a cache under-count.
      ev.usage = { outputTokens: count(v['eval_count']) ?? 0, source: 'server-usage' };
      const prompt = count(v['prompt_eval_count']);
      if (prompt !== undefined) ev.usage.promptTokens = prompt;
    }
    return ev.text === undefined && ev.done === undefined ? null : ev;
  }

  end(): FrameEvent | null {
    return null;
  }
}

