/** SGLang's OpenAI-compatible completions and chat routes (wire-formats.md §4.4–4.5). */
import { inlineOutputText, inlineStepText, inlineTokenOut, reasoningCount, splitOutput, tokenText } from './filler.js';
import { SSE_DONE, readOpenAi, sse } from './openai-common.js';
import { sglangLengthMessage } from './length-errors.js';
import { resolveMax } from './request.js';
import { json, type FinishReason, type GenEncoder, type GenIdentity, type GenPlan, type GenTimings, type HttpReply, type WireContext } from './types.js';

export const SGLANG_EOS_ID = 128009;

const TYPE: Record<number, string> = { 400: 'BadRequestError', 404: 'NotFoundError', 429: 'TooManyRequestsError', 500: 'InternalServerError', 503: 'ServiceUnavailableError' };

/** SGLang's OpenAI routes keep the flat vLLM-0.x error object. */
export function sglangFlatError(status: number, message: string): HttpReply {
  return json(status, JSON.stringify({ object: 'error', message, type: TYPE[status] ?? 'BadRequestError', param: null, code: status }));
}

export { sglangLengthMessage };

function matched(finish: FinishReason | null): string {
  return finish === 'stop' ? String(SGLANG_EOS_ID) : 'null';
}

/** `cached` is set with --enable-cache-report: prompt_tokens_details then always carries cached_tokens. */
function usage(p: number, n: number, details: boolean, cached?: number, reasoning = 0): string {
  const d = cached !== undefined ? `,"prompt_tokens_details":{"cached_tokens":${cached}}` : details ? ',"prompt_tokens_details":null' : '';
  return `{"prompt_tokens":${p},"total_tokens":${p + n},"completion_tokens":${n}${d},"reasoning_tokens":${reasoning}}`;
}

const cachedOf = (report: boolean, t: GenTimings): number | undefined => (report ? (t.cachedTokens ?? 0) : undefined);

function completionEncoder(model: string, id: GenIdentity, p: number, includeUsage: boolean, report: boolean): GenEncoder {
  const head = `{"id":"cmpl-${id.hex}","object":"text_completion","created":${id.createdSec},"model":${JSON.stringify(model)},"choices":`;
  const chunk = (text: string, finish: FinishReason | null): string =>
    sse(`${head}[{"index":0,"text":${JSON.stringify(text)},"logprobs":null,"finish_reason":${finish ? `"${finish}"` : 'null'},"matched_stop":${matched(finish)}}],"usage":null}`);
  const tail = (n: number, t: GenTimings): string => (includeUsage ? sse(`${head}[],"usage":${usage(p, n, false, cachedOf(report, t))}}`) : '') + SSE_DONE;
  return {
    delimiter: '\n\n',
    streamHeaders: () => ({ 'content-type': 'text/event-stream; charset=utf-8' }),
    token: (i, finish, t) => chunk(inlineTokenOut(id.offset, id.reasoning, i, finish), finish) + (finish ? tail(i + 1, t) : ''),
    // Speculative decoding: the step's tokens in one chunk.
    tokens: (from, n, finish, t) => chunk(inlineStepText(id.offset, id.reasoning, from, n, finish), finish) + (finish ? tail(from + n, t) : ''),
    tail: (n, finish, t) => chunk('', finish) + tail(n, t),
    body: (n, finish, t) =>
      json(200, `${head}[{"index":0,"text":${JSON.stringify(inlineOutputText(id.offset, id.reasoning, n, finish))},"logprobs":null,"finish_reason":"${finish}","matched_stop":${matched(finish)}}],"usage":${usage(p, n, true, cachedOf(report, t))},"metadata":null}`),
  };
}

function chatEncoder(model: string, id: GenIdentity, p: number, includeUsage: boolean, report: boolean): GenEncoder {
  const head = `{"id":"chatcmpl-${id.hex}","object":"chat.completion.chunk","created":${id.createdSec},"model":${JSON.stringify(model)},"choices":`;
  const role = sse(`${head}[{"index":0,"delta":{"reasoning_content":null,"role":"assistant","content":""},"logprobs":null,"finish_reason":null,"matched_stop":null}]}`);
  const content = (text: string): string => sse(`${head}[{"index":0,"delta":{"reasoning_content":null,"content":${JSON.stringify(text)}},"logprobs":null,"finish_reason":null,"matched_stop":null}]}`);
  // --reasoning-tokens: the reasoning parser's deltas come first (content null), the answer after.
  const thought = (text: string): string => sse(`${head}[{"index":0,"delta":{"reasoning_content":${JSON.stringify(text)},"content":null},"logprobs":null,"finish_reason":null,"matched_stop":null}]}`);
  const piece = (i: number): string => (i < (id.reasoning ?? 0) ? thought(tokenText(id.offset, i)) : content(tokenText(id.offset, i)));
  const tail = (n: number, finish: FinishReason, t: GenTimings): string =>
    sse(`${head}[{"index":0,"delta":{"reasoning_content":null},"logprobs":null,"finish_reason":"${finish}","matched_stop":${matched(finish)}}]}`) +
    (includeUsage ? sse(`${head}[],"usage":${usage(p, n, true, cachedOf(report, t), reasoningCount(id.reasoning, n))}}`) : '') +
    SSE_DONE;
  return {
    delimiter: '\n\n',
    streamHeaders: () => ({ 'content-type': 'text/event-stream; charset=utf-8' }),
    // the EOS token of a natural stop has no text, so no content chunk: only the finish chunk
    token: (i, finish, t) => (i === 0 ? role : '') + (finish === 'stop' ? '' : piece(i)) + (finish ? tail(i + 1, finish, t) : ''),
    // Speculative decoding: the step's reasoning tokens in one delta and its answer tokens in one (two events only
    // when the step crosses from reasoning into the answer); a natural stop's EOS has no text.
    tokens: (from, n, finish, t) => {
      const end = from + n - (finish === 'stop' ? 1 : 0);
      const split = Math.min(Math.max(id.reasoning ?? 0, from), end);
      let reasoning = '';
      let answer = '';
      for (let i = from; i < split; i++) reasoning += tokenText(id.offset, i);
      for (let i = split; i < end; i++) answer += tokenText(id.offset, i);
      return (from === 0 ? role : '') + (reasoning ? thought(reasoning) : '') + (answer ? content(answer) : '') + (finish ? tail(from + n, finish, t) : '');
    },
    tail: (n, finish, t) => (n === 0 ? role : '') + tail(n, finish, t),
    body: (n, finish, t) => {
      const out = splitOutput(id.offset, id.reasoning, n, finish);
      return json(
        200,
        `{"id":"chatcmpl-${id.hex}","object":"chat.completion","created":${id.createdSec},"model":${JSON.stringify(model)},"choices":[{"index":0,"message":{"role":"assistant","content":${JSON.stringify(out.answer)},"reasoning_content":${id.reasoning ? JSON.stringify(out.reasoning) : 'null'},"tool_calls":null},"logprobs":null,"finish_reason":"${finish}","matched_stop":${matched(finish)}}],"usage":${usage(p, n, true, cachedOf(report, t), reasoningCount(id.reasoning, n))},"metadata":null}`,
      );
    },
  };
}

function openAi(chat: boolean) {
  return (ctx: WireContext, input: { body: unknown }, id: GenIdentity): GenPlan | HttpReply => {
    const r = readOpenAi(input.body, chat);
    if (typeof r === 'string') return sglangFlatError(400, r);
    if (!r.prompt.ok) return sglangFlatError(400, r.prompt.message);
    if (r.requestedMax !== undefined && r.requestedMax <= 0) return sglangFlatError(400, 'max_tokens must be positive.');
    const len = resolveMax(ctx.maxModelLen, r.prompt.tokens, r.requestedMax, chat ? 'remaining' : 16);
    if (!len.ok) return sglangFlatError(400, sglangLengthMessage(len));
    const model = r.model ?? 'default';
    const report = ctx.promptTokensDetails === true;
    const enc = chat ? chatEncoder(model, id, r.prompt.tokens, r.includeUsage === true, report) : completionEncoder(model, id, r.prompt.tokens, r.includeUsage === true, report);
    return { promptTokens: r.prompt.tokens, maxTokens: len.maxTokens, ignoreEos: r.ignoreEos, minTokens: r.minTokens, stream: r.stream, encoder: enc };
  };
}

export const sglangCompletions = openAi(false);
export const sglangChat = openAi(true);
