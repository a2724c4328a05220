import {
  type Json,
  NOT_JSON,
  count,
  errorMessage,
  errorOf,
  isObj,
  sseOrJsonPost,
  mergeExtra,
  normFinish,
  parseErrorEvent,
  parseObject,
  str,
  suffixAfter,
} from './_shared.js';
import { finishFailure } from './_finish.js';
import type { Dialect, FrameEvent, GenerationRequest, HttpRequestPlan, StreamParser } from './types.js';

/**
 * SGLang native POST /generate: SSE of `{text, output_ids, meta_info}` then [DONE]. `text` is cumulative
 * by default and a delta with --incremental-streaming-output; `meta_info.completion_tokens` is cumulative
 * in both. forceLength = `sampling_params.ignore_eos` + `min_new_tokens`.
 */
export const sglang: Dialect = {
  name: 'sglang',
  canForceLength: true,
  buildRequest(req: GenerationRequest): HttpRequestPlan {
    const sp: Json = { max_new_tokens: req.maxTokens };
    if (req.forceLength) {
      sp['ignore_eos'] = true;
      sp['min_new_tokens'] = req.maxTokens;
    }
    const body: Json = { text: req.prompt, sampling_params: sp, stream: req.stream };
    return sseOrJsonPost('/generate', mergeExtra(body, req.extraBody), req.stream);
  },
  createParser(req?: GenerationRequest): StreamParser {
    return new MetaInfoParser(req, true);
  },
  errorMessage,
};

/**
 * Shared with lmdeploy's /generate (same payload, but always deltas). Cumulative vs delta is decided per
 * event from `output_ids`: cumulative ids are as long as `completion_tokens`; without ids, by prefix.
 */
export class MetaInfoParser implements StreamParser {
  private readonly whole: boolean;
  private readonly mayBeCumulative: boolean;
  private prevText = '';
  private prevTokens = 0;
  private finished = false;
  private textMode: 'cumulative' | 'delta' | undefined;
  private done = false;

  constructor(req: GenerationRequest | undefined, mayBeCumulative: boolean) {
    this.whole = req?.stream === false;
    this.mayBeCumulative = mayBeCumulative;
  }

  frame(payload: string): FrameEvent | null {
    if (payload === '[DONE]') {
      this.done = true;
      return { done: true };
    }
    const parsed = parseObject(payload);
    const v = Array.isArray(parsed) ? parsed[0] : parsed;
    if (v === NOT_JSON || !isObj(v)) return parseErrorEvent(payload);
    const err = errorOf(v);
    if (err !== undefined) return { error: err };
    const meta = isObj(v['meta_info']) ? v['meta_info'] : {};
    const ev: FrameEvent = {};
    const total = count(meta['completion_tokens']);
    const raw = str(v['text']) ?? '';
    const cumulative = this.cumulative(v['output_ids'], total, raw);
    const text = cumulative ? suffixAfter(this.prevText, raw) : raw;
    this.prevText = cumulative ? raw : this.prevText + text;
    if (text !== '') ev.text = text;
    if (total !== undefined) {
      if (total > this.prevTokens) ev.tokens = total - this.prevTokens;
      this.prevTokens = Math.max(this.prevTokens, total);
      ev.usage = { outputTokens: total, source: 'server-usage' };
      const prompt = count(meta['prompt_tokens']);
      const cached = count(meta['cached_tokens']);
      if (prompt !== undefined) ev.usage.promptTokens = prompt;
      if (cached !== undefined) ev.usage.cachedTokens = cached;
      // Sent on the finishing frame when the server runs speculative decoding.
      const verify = count(meta['spec_verify_ct']);
      if (verify !== undefined && verify > 0) ev.usage.specVerifySteps = verify;
    }
    // SGLang and lmdeploy ≥0.11 send {type, message?, status_code?}; older builds a bare word.
    const fr = meta['finish_reason'];
    const finish = normFinish(isObj(fr) ? fr['type'] : fr);
    if (finish !== undefined) {
      ev.finishReason = finish;
      this.finished = true;
      const failed = finishFailure(finish, isObj(fr) ? abortDetail(fr) : undefined);
      if (failed !== undefined) ev.error = failed;
    }
    if (this.whole) ev.done = this.done = true;
    return ev;
  }

  private cumulative(ids: unknown, total: number | undefined, raw: string): boolean {
    if (!this.mayBeCumulative) return false;
    if (Array.isArray(ids) && total !== undefined) return ids.length === total;
    // No ids (2024 builds): decide once, on the first event that can tell, so that a delta which merely
    // repeats the text so far (" the" after " the") is not mistaken for a cumulative no-op.
    if (this.textMode === undefined && this.prevText !== '' && raw !== this.prevText) {
      this.textMode = raw.startsWith(this.prevText) ? 'cumulative' : 'delta';
    }
    return this.textMode !== 'delta';
  }

  /** A body cut after the finish event but before [DONE] still delivered everything. */
  end(): FrameEvent | null {
    return this.finished && !this.done ? { done: true } : null;
  }
}

/** SGLang's abort object: `message` plus the HTTP-like `status_code` it would have answered with. */
function abortDetail(fr: Json): string | undefined {
  const message = str(fr['message']);
  const status = count(fr['status_code']);
  if (message === undefined) return status === undefined ? undefined : `status ${status}`;
  return status === undefined ? message : `${message} (status ${status})`;
}
