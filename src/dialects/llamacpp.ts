import {
  type Json,
  NOT_JSON,
  count,
  errorFieldEvent,
  errorMessage,
  errorOf,
  isObj,
  sseOrJsonPost,
  mergeExtra,
  normFinish,
  parseErrorEvent,
  parseObject,
  str,
} from './_shared.js';
import { finishFailure } from './_finish.js';
import type { Dialect, FrameEvent, GenerationRequest, HttpRequestPlan, StreamParser } from './types.js';

/**
 * llama.cpp native POST /completion: SSE without [DONE]; the last event has `"stop":true`,
 * `tokens_predicted`, `tokens_evaluated` (prompt incl. cached) and `timings.cache_n`. forceLength =
 * `ignore_eos` (there is no min-tokens parameter; a stop word or a full context still ends early).
 */
export const llamacpp: Dialect = {
  name: 'llamacpp',
  canForceLength: true,
  buildRequest(req: GenerationRequest): HttpRequestPlan {
    const body: Json = { prompt: req.prompt, n_predict: req.maxTokens, stream: req.stream };
    if (req.forceLength) body['ignore_eos'] = true;
    return sseOrJsonPost('/completion', mergeExtra(body, req.extraBody), req.stream);
  },
  createParser(): StreamParser {
    return new LlamacppParser();
  },
  errorMessage,
};

class LlamacppParser implements StreamParser {
  private predicted = 0;

  frame(payload: string, field: 'data' | 'error'): FrameEvent | null {
    if (field === 'error') return errorFieldEvent(payload);
    if (payload === '[DONE]') return { done: true };
    const v = parseObject(payload);
    if (v === NOT_JSON || !isObj(v)) return parseErrorEvent(payload);
    const err = errorOf(v);
    if (err !== undefined) return { error: err };
    const ev: FrameEvent = {};
    const content = str(v['content']) ?? '';
    if (content !== '') ev.text = content;
    const predicted = count(v['tokens_predicted']);
    const ids = v['tokens'];
    if (predicted !== undefined) {
      if (predicted > this.predicted) ev.tokens = predicted - this.predicted;
      this.predicted = Math.max(this.predicted, predicted);
    } else if (Array.isArray(ids) && ids.length > 0) {
      ev.tokens = ids.length;
      this.predicted += ids.length;
    }
    if (v['stop'] === true) {
      ev.done = true;
      const finish = finishOf(v);
      if (finish !== undefined) ev.finishReason = finish;
      const failed = finishFailure(finish);
      if (failed !== undefined) ev.error = failed;
      const out = predicted ?? this.predicted;
      ev.usage = { outputTokens: out, source: 'server-usage' };
      const prompt = count(v['tokens_evaluated']);
      if (prompt !== undefined) ev.usage.promptTokens = prompt;
      const timings = v['timings'];
      const cached = isObj(timings) ? count(timings['cache_n']) : undefined;
      if (cached !== undefined) ev.usage.cachedTokens = cached;
    }
    return ev.text === undefined && ev.tokens === undefined && ev.done === undefined ? null : ev;
  }

  end(): FrameEvent | null {
    return null;
  }
}

/** `stop_type` (2024+) or the older `stopped_eos` / `stopped_word` / `stopped_limit` booleans. */
function finishOf(v: Json): string | undefined {
  const type = str(v['stop_type']);
  if (type !== undefined && type !== 'none') return normFinish(type);
  if (v['stopped_limit'] === true) return 'length';
  if (v['stopped_eos'] === true || v['stopped_word'] === true) return 'stop';
  return undefined;
}
