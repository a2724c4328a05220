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
 * TGI native: POST /generate_stream (SSE, `data:` without a space, no [DONE]) or /generate. `details:true`
 * makes the final event carry `details.generated_tokens` (+ `input_length` from 2.3) = usage source
 * 'server-details'. TGI exposes neither ignore_eos nor a minimum length, so length cannot be forced.
 */
export const tgi: Dialect = {
  name: 'tgi',
  canForceLength: false,
  buildRequest(req: GenerationRequest): HttpRequestPlan {
    const body: Json = { inputs: req.prompt, parameters: { max_new_tokens: req.maxTokens, details: true } };
    return sseOrJsonPost(req.stream ? '/generate_stream' : '/generate', mergeExtra(body, req.extraBody), req.stream);
  },
  createParser(): StreamParser {
    return new TgiParser();
  },
  errorMessage,
};

class TgiParser implements StreamParser {
  frame(payload: string, field: 'data' | 'error'): FrameEvent | null {
    if (field === 'error') return errorFieldEvent(payload);
    const parsed = parseObject(payload);
    // POST / (compat route) answers a one-element array; accept it too.
    const v = Array.isArray(parsed) ? parsed[0] : parsed;
    if (v === NOT_JSON || !isObj(v)) return parseErrorEvent(payload);
    const err = errorOf(v);
    if (err !== undefined) return { error: err };
    const ev: FrameEvent = {};
    const token = v['token'];
    if (isObj(token)) {
      ev.tokens = 1;
      // The EOS token is streamed as special text ("</s>") that generated_text leaves out.
      const text = token['special'] === true ? '' : (str(token['text']) ?? '');
      if (text !== '') ev.text = text;
    }
    const generated = str(v['generated_text']);
    if (generated !== undefined) {
      ev.done = true;
      if (!isObj(token) && generated !== '') ev.text = generated;
      const details = v['details'];
      if (isObj(details)) {
        const finish = normFinish(details['finish_reason']);
        if (finish !== undefined) ev.finishReason = finish;
        const failed = finishFailure(finish);
        if (failed !== undefined) ev.error = failed;
        const out = count(details['generated_tokens']);
        const prompt = count(details['input_length']);
        if (out !== undefined) {
          ev.usage = { outputTokens: out, source: 'server-details' };
          if (prompt !== undefined) ev.usage.promptTokens = prompt;
        }
      }
    }
    return ev.tokens === undefined && ev.done === undefined ? null : ev;
  }

  end(): FrameEvent | null {
    return null;
  }
}
