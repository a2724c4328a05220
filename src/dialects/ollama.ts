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
import { imagePlaceholders, spliceImages } from './_images.js';
import type { Dialect, FrameEvent, GenerationRequest, HttpRequestPlan, StreamParser } from './types.js';

/**
 * Ollama native POST /api/generate: NDJSON ending with a `"done":true` object that carries
 * `eval_count` / `prompt_eval_count` (omitted when 0) and ns durations. `raw:true` sends the prompt
 * untemplated (exact prompt tokens, no `context` array in the reply). Length cannot be forced:
 * `options.num_predict` is only a cap. A request with images goes to POST /api/chat instead (same NDJSON).
 */
export const ollama: Dialect = {
  name: 'ollama',
  canForceLength: false,
  buildRequest(req: GenerationRequest): HttpRequestPlan {
    const images = req.images !== undefined && req.images.length > 0 ? req.images : undefined;
    const body: Json = images
      ? { model: req.model, messages: chatWithImages(req, imagePlaceholders(images)), stream: req.stream, options: { num_predict: req.maxTokens } }
      : { model: req.model, prompt: req.prompt, raw: true, stream: req.stream, options: { num_predict: req.maxTokens } };
    const json = JSON.stringify(mergeExtra(body, req.extraBody));
    return {
      method: 'POST',
      path: images ? '/api/chat' : '/api/generate',
      headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
      // Ollama wants the bare base64 of each image, without the data: URL's head.
      ...(images ? spliceImages(json, images.map((url) => url.slice(url.indexOf(',') + 1))) : { body: json }),
      framing: req.stream ? 'ndjson' : 'json',
    };
  },
  createParser(): StreamParser {
    return new OllamaParser();
  },
  errorMessage,
};

/**
 * Images ride on /api/chat (raw /api/generate would need `[img-N]` tags in the prompt): the last user message
 * carries them as bare base64 in `images`, Ollama's own form; the chat template then places them.
 */
function chatWithImages(req: GenerationRequest, images: string[]): Json[] {
  const messages: Json[] = (req.messages ?? [{ role: 'user', content: req.prompt }]).map((m) => ({ role: m.role, content: m.content }));
  const last = messages.map((m) => m['role']).lastIndexOf('user');
  const target = messages[last < 0 ? messages.length - 1 : last] as Json;
  target['images'] = images;
  return messages;
}

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

