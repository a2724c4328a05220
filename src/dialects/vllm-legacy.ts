import {
  NOT_JSON,
  errorMessage,
  errorOf,
  jsonHeaders,
  mergeExtra,
  parseErrorEvent,
  parseObject,
  str,
  suffixAfter,
} from './_shared.js';
import type { Dialect, FrameEvent, GenerationRequest, HttpRequestPlan, StreamParser } from './types.js';

/**
 * vLLM's legacy demo server (`python -m vllm.entrypoints.api_server`): POST /generate, each frame is
 * `{"text": [prompt + output so far]}`, NUL-terminated up to 0.6.3 and LF-terminated later, no end event
 * and no counts (the caller falls back to its tokenizer). forceLength sends only `ignore_eos`: 0.2.x
 * turns an unknown `min_tokens` into a TypeError 500.
 */
export const vllmLegacy: Dialect = {
  name: 'vllm',
  canForceLength: true,
  buildRequest(req: GenerationRequest): HttpRequestPlan {
    const body: Record<string, unknown> = { prompt: req.prompt, max_tokens: req.maxTokens, stream: req.stream };
    if (req.forceLength) body['ignore_eos'] = true;
    return {
      method: 'POST',
      path: '/generate',
      headers: jsonHeaders(false),
      body: JSON.stringify(mergeExtra(body, req.extraBody)),
      framing: req.stream ? 'nul-or-ndjson' : 'json',
    };
  },
  createParser(req?: GenerationRequest): StreamParser {
    return new VllmLegacyParser(req);
  },
  errorMessage,
};

class VllmLegacyParser implements StreamParser {
  private readonly whole: boolean;
  /** Everything already seen, starting with the echoed prompt. */
  private seen: string;
  private ended = false;

  constructor(req?: GenerationRequest) {
    this.whole = req?.stream === false;
    this.seen = req?.prompt ?? '';
  }

  frame(payload: string): FrameEvent | null {
    const v = parseObject(payload);
    if (v === NOT_JSON || Array.isArray(v)) return parseErrorEvent(payload);
    const err = errorOf(v);
    if (err !== undefined) return { error: err };
    const list = v['text'];
    const full = Array.isArray(list) ? str(list[0]) : undefined;
    if (full === undefined) return parseErrorEvent(payload);
    const text = suffixAfter(this.seen, full);
    this.seen = full;
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
