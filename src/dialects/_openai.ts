import {
  ChunkTemplate,
  type Json,
  NOT_JSON,
  errorFieldEvent,
  errorOf,
  isObj,
  mergeExtra,
  normFinish,
  openAiUsage,
  parseErrorEvent,
  parseObject,
  str,
  userMessages,
} from './_shared.js';
import { finishFailure } from './_finish.js';
import type { FrameEvent, GenerationRequest, StreamParser, TextSlot } from './types.js';

/**
 * Body for /v1/chat/completions or /v1/completions. forceLength sends vLLM/SGLang's `ignore_eos` +
 * `min_tokens`; other servers may reject unknown fields (OpenAI does): turn forceLength off there, or
 * drop one with extraBody `{"min_tokens":null}`. An empty `model` is left out (vLLM then uses its only model).
 */
export function openAiBody(req: GenerationRequest, chat: boolean): Json {
  const body: Json = {};
  if (req.model !== '') body['model'] = req.model;
  if (chat) body['messages'] = withImageParts(userMessages(req), req.images);
  else body['prompt'] = req.prompt;
  body['max_tokens'] = req.maxTokens;
  body['stream'] = req.stream;
  if (req.stream) body['stream_options'] = { include_usage: true };
  if (req.forceLength) {
    body['ignore_eos'] = true;
    body['min_tokens'] = req.maxTokens;
  }
  return mergeExtra(body, req.extraBody);
}

/**
 * Images go as OpenAI content parts after the text of the last user message: `[{type:text}, {type:image_url,
 * image_url:{url}}…]`, the form vLLM, SGLang, TGI's messages API, lmdeploy, llama.cpp and trtllm-serve all read.
 */
function withImageParts(messages: { role: string; content: string }[], images: string[] | undefined): Json[] {
  if (!images || images.length === 0) return messages;
  let last = -1;
  messages.forEach((m, i) => (m.role === 'user' ? (last = i) : undefined));
  return messages.map((m, i) =>
    i !== last ? m : { role: m.role, content: [{ type: 'text', text: m.content }, ...images.map((url) => ({ type: 'image_url', image_url: { url } }))] },
  );
}

/**
 * One parser for chat and completions chunks of every OpenAI-compatible server: text from `delta`,
 * `message` or `text`; reasoning text counts as generated text and is also said apart (`reasoning`); `usage` wherever it appears (nulls
 * ignored; lmdeploy ≤0.9 sends a running total on every chunk, so the last one wins).
 */
export class OpenAiParser implements StreamParser {
  private readonly whole: boolean;
  private finished = false;
  private done = false;
  private readonly template = new ChunkTemplate(['"text":"', '"content":"']);
  /** The last payload was read by, or set, the template. */
  private lastInSlot = false;

  constructor(req?: GenerationRequest) {
    this.whole = req?.stream === false;
  }

  frame(payload: string, field: 'data' | 'error'): FrameEvent | null {
    this.lastInSlot = false;
    if (field === 'error') return errorFieldEvent(payload);
    const text = this.template.match(payload);
    if (text !== undefined) {
      this.lastInSlot = true;
      return text === '' ? null : { text };
    }
    const ev = this.parse(payload);
    // The template learns answer chunks only: a reasoning chunk has its text in another field.
    if (ev !== null && ev.text !== undefined && ev.reasoning === undefined && !this.whole && ev.usage === undefined && ev.finishReason === undefined && ev.error === undefined) {
      this.lastInSlot = this.template.learn(payload, ev.text);
    }
    return ev;
  }

  textSlot(): TextSlot | undefined {
    return this.lastInSlot ? this.template.slot() : undefined;
  }

  private parse(payload: string): FrameEvent | null {
    if (payload === '[DONE]') {
      this.done = true;
      return { done: true };
    }
    const v = parseObject(payload);
    if (v === NOT_JSON || Array.isArray(v)) return parseErrorEvent(payload);
    const err = errorOf(v);
    if (err !== undefined) return this.whole ? { error: err, done: true } : { error: err };
    const ev: FrameEvent = {};
    let text = '';
    let reasoning = '';
    const choices = v['choices'];
    if (Array.isArray(choices)) {
      for (const c of choices) {
        if (!isObj(c)) continue;
        const [r, t] = choiceText(c);
        reasoning += r;
        text += r + t;
        const finish = normFinish(c['finish_reason']);
        if (finish !== undefined) ev.finishReason = finish;
      }
    }
    if (text !== '') ev.text = text;
    if (reasoning !== '') ev.reasoning = reasoning;
    const usage = openAiUsage(v['usage']);
    if (usage !== undefined) ev.usage = usage;
    if (ev.finishReason !== undefined) this.finished = true;
    const failed = finishFailure(ev.finishReason);
    if (failed !== undefined) ev.error = failed;
    if (this.whole) ev.done = this.done = true;
    return ev.text === undefined && ev.usage === undefined && ev.finishReason === undefined && ev.error === undefined && !this.whole
      ? null
      : ev;
  }

  /** A body cut after the finish chunk but before [DONE] still delivered all text (usage may be missing). */
  end(): FrameEvent | null {
    return this.finished && !this.done ? { done: true } : null;
  }
}

/** [reasoning, answer] text of one choice: reasoning from `reasoning_content` (vLLM, SGLang, lmdeploy, llama.cpp) or `reasoning`. */
function choiceText(c: Json): [string, string] {
  const d = isObj(c['delta']) ? c['delta'] : isObj(c['message']) ? c['message'] : undefined;
  if (d === undefined) return ['', str(c['text']) ?? ''];
  return [str(d['reasoning_content']) ?? str(d['reasoning']) ?? '', str(d['content']) ?? ''];
}
