/**
 * TGI v3 Messages API and /v1/completions (wire-formats.md §3.5): serde tag puts "object" first, `id`
 * is "", `system_fingerprint` is "<version>-native", every chat delta repeats role, "usage":null on each
 * chunk and an extra usage chunk with include_usage, `data:` without a space, then `data:[DONE]`.
 * Completions use TGI-native finish reasons, "finish_reason":"" while running and `model` after `choices`.
 */
import { readOpenAi } from './openai-common.js';
import { TGI_FINGERPRINT, tgiError, tgiFinish, tgiGenerated, tgiLengthMessage, tgiResolveMax, tgiTimingHeaders } from './tgi-common.js';
import { inlineTokenOut } from './filler.js';
import { json, type FinishReason, type GenEncoder, type GenIdentity, type GenPlan, type HttpReply, type WireContext } from './types.js';

const DONE = 'data:[DONE]\n\n';

function chatEncoder(id: GenIdentity, model: string, promptTokens: number, includeUsage: boolean): GenEncoder {
  const head = `{"object":"chat.completion.chunk","id":"","created":${id.createdSec},"model":${JSON.stringify(model)},"system_fingerprint":"${TGI_FINGERPRINT}","choices":`;
  const chunk = (content: string, finish: FinishReason | null): string =>
    `data:${head}[{"index":0,"delta":{"role":"assistant","content":${JSON.stringify(content)}},"logprobs":null,"finish_reason":${finish ? `"${finish === 'stop' ? 'stop' : 'length'}"` : 'null'}}],"usage":null}\n\n`;
  const tail = (count: number): string =>
    (includeUsage ? `data:${head}[],"usage":{"prompt_tokens":${promptTokens},"completion_tokens":${count},"total_tokens":${promptTokens + count}}}\n\n` : '') + DONE;
  return {
    delimiter: '\n\n',
    streamHeaders: () => ({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-compute-type': 'gpu+optimized', 'x-accel-buffering': 'no' }),
    // the EOS special token of a natural stop arrives as empty content
    token: (i, finish) => chunk(finish === 'stop' ? '' : inlineTokenOut(id.offset, id.reasoning, i, null), finish) + (finish ? tail(i + 1) : ''),
    tail: (count, finish) => chunk('', finish) + tail(count),
    body: (count, finish, t) =>
      json(
        200,
        `{"object":"chat.completion","id":"","created":${id.createdSec},"model":${JSON.stringify(model)},"system_fingerprint":"${TGI_FINGERPRINT}","choices":[{"index":0,"message":{"role":"assistant","content":${JSON.stringify(tgiGenerated(id, count, finish))}},"logprobs":null,"finish_reason":"${finish === 'stop' ? 'stop' : 'length'}"}],"usage":{"prompt_tokens":${promptTokens},"completion_tokens":${count},"total_tokens":${promptTokens + count}}}`,
        tgiTimingHeaders(t, promptTokens, count),
      ),
  };
}

function completionEncoder(id: GenIdentity, model: string, promptTokens: number): GenEncoder {
  const m = JSON.stringify(model);
  const partial = (text: string): string =>
    `data:{"object":"text_completion","id":"","created":${id.createdSec},"choices":[{"index":0,"text":${JSON.stringify(text)},"logprobs":null,"finish_reason":""}],"model":${m},"system_fingerprint":"${TGI_FINGERPRINT}"}\n\n`;
  const final = (text: string, count: number, finish: FinishReason): string =>
    `data:{"object":"text_completion","id":"","created":${id.createdSec},"model":${m},"system_fingerprint":"${TGI_FINGERPRINT}","choices":[{"index":0,"text":${JSON.stringify(text)},"logprobs":null,"finish_reason":"${tgiFinish(finish)}"}],"usage":{"prompt_tokens":${promptTokens},"completion_tokens":${count},"total_tokens":${promptTokens + count}}}\n\n` +
    DONE;
  return {
    delimiter: '\n\n',
    streamHeaders: () => ({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-compute-type': 'gpu+optimized', 'x-accel-buffering': 'no' }),
    token: (i, finish) => (finish ? final(finish === 'stop' ? '' : inlineTokenOut(id.offset, id.reasoning, i, null), i + 1, finish) : partial(inlineTokenOut(id.offset, id.reasoning, i, null))),
    tail: (count, finish) => final('', count, finish),
    body: (count, finish, t) =>
      json(
        200,
        `{"object":"text_completion","id":"","created":${id.createdSec},"model":${m},"system_fingerprint":"${TGI_FINGERPRINT}","choices":[{"index":0,"text":${JSON.stringify(tgiGenerated(id, count, finish))},"logprobs":null,"finish_reason":"${tgiFinish(finish)}"}],"usage":{"prompt_tokens":${promptTokens},"completion_tokens":${count},"total_tokens":${promptTokens + count}}}`,
        tgiTimingHeaders(t, promptTokens, count),
      ),
  };
}

function openAi(chat: boolean) {
  return (ctx: WireContext, input: { body: unknown }, id: GenIdentity): GenPlan | HttpReply => {
    const r = readOpenAi(input.body, chat);
    if (typeof r === 'string') return tgiError(422, r, 'validation');
    const inBand = (msg: string): HttpReply =>
      r.stream
        ? { status: 200, headers: { 'content-type': 'text/event-stream' }, body: `data:${JSON.stringify({ error: { message: msg, http_status_code: 422 } })}\n\n` }
        : tgiError(422, msg, 'validation');
    if (!r.prompt.ok) return inBand(r.prompt.message);
    const len = tgiResolveMax(ctx.maxModelLen, r.prompt.tokens, r.requestedMax);
    if (!len.ok) return inBand(tgiLengthMessage(len));
    const model = r.model ?? ctx.model;
    const enc = chat ? chatEncoder(id, model, r.prompt.tokens, r.includeUsage === true) : completionEncoder(id, model, r.prompt.tokens);
    return { promptTokens: r.prompt.tokens, maxTokens: len.maxTokens, ignoreEos: false, stream: r.stream, encoder: enc };
  };
}

export const tgiChat = openAi(true);
export const tgiCompletions = openAi(false);
