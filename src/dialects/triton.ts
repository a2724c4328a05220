import {
  type Json,
  NOT_JSON,
  errorMessage,
  errorOf,
  isObj,
  sseOrJsonPost,
  mergeExtra,
  parseErrorEvent,
  parseObject,
  str,
} from './_shared.js';
import type { Dialect, FrameEvent, GenerationRequest, HttpRequestPlan, StreamParser } from './types.js';

/**
 * Triton generate extension (TensorRT-LLM ensemble): POST /v2/models/{model}/generate_stream. Keys are
 * alphabetical, `text_output` holds the new text, and there is no end event, finish reason or count (the
 * caller falls back to its tokenizer). forceLength sends `min_length` = max_tokens (TRT-LLM ≤0.18; later
 * backends call it `min_tokens`: extraBody `{"min_tokens":N,"min_length":null}`). `model` defaults to
 * `ensemble`.
 */
export const triton: Dialect = {
  name: 'triton',
  canForceLength: true,
  buildRequest(req: GenerationRequest): HttpRequestPlan {
    const body: Json = {
      text_input: req.prompt,
      max_tokens: req.maxTokens,
      bad_words: '',
      stop_words: '',
      stream: req.stream,
    };
    if (req.forceLength) body['min_length'] = req.maxTokens;
    const model = encodeURIComponent(req.model === '' ? 'ensemble' : req.model);
    return sseOrJsonPost(`/v2/models/${model}/${req.stream ? 'generate_stream' : 'generate'}`, mergeExtra(body, req.extraBody), req.stream);
  },
  createParser(req?: GenerationRequest): StreamParser {
    return new TritonParser(req);
  },
  errorMessage,
};

class TritonParser implements StreamParser {
  private readonly whole: boolean;
  private readonly prompt: string;
  private ended = false;

  constructor(req?: GenerationRequest) {
    this.whole = req?.stream === false;
    this.prompt = req?.prompt ?? '';
  }

  frame(payload: string): FrameEvent | null {
    const v = parseObject(payload);
    if (v === NOT_JSON || !isObj(v)) return parseErrorEvent(payload);
    const err = errorOf(v);
    if (err !== undefined) return { error: err };
    let text = str(v['text_output']) ?? (Array.isArray(v['text_output']) ? str(v['text_output'][0]) : '') ?? '';
    // Non-stream output repeats the prompt unless the model runs with exclude_input_in_output.
    if (this.whole && this.prompt !== '' && text.startsWith(this.prompt)) text = text.slice(this.prompt.length);
    const ev: FrameEvent = {};
    if (text !== '') ev.text = text;
    if (this.whole) {
      ev.done = true;
      this.ended = true;
    }
    return ev.text === undefined && ev.done === undefined ? null : ev;
  }

  end(): FrameEvent | null {
    return this.ended ? null : { done: true };
  }
}
