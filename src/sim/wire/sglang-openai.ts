/** SGLang's OpenAI-compatible completions and chat routes (wire-formats.md §4.4–4.5). */
import { outputText, tokenOut, tokenText } from './filler.js';
import { SSE_DONE, readOpenAi, sse } from './openai-common.js';
import { sglangLengthMessage } from './length-errors.js';
import { resolveMax } from './request.js';
import { json, type FinishReason, type GenEncoder, type GenIdentity, type GenPlan, type HttpReply, type WireContext } from './types.js';

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

function usage(p: number, n: number, details: boolean): string {
  return `{"prompt_tokens":${p},"total_tokens":${p + n},"completion_tokens":${n}${details ? ',"prompt_tokens_details":null' : ''},"reasoning_tokens":0}`;
}

function completionEncoder(model: string, id: GenIdentity, p: number, includeUsage: boolean): GenEncoder {
  const head = `{"id":"cmpl-${id.hex}","object":"text_completion","created":${id.createdSec},"model":${JSON.stringify(model)},"choices":`;
  const chunk = (text: string, finish: FinishReason | null): string =>
    sse(`${head}[{"index":0,"text":${JSON.stringify(text)},"logprobs":null,"finish_reason":${finish ? `"${finish}"` : 'null'},"matched_stop":${matched(finish)}}],"usage":null}`);
  const tail = (n: number): string => (includeUsage ? sse(`${head}[],"usage":${usage(p, n, false)}}`) : '') + SSE_DONE;
  return {
    delimiter: '\n\n',
    streamHeaders: () => ({ 'content-type': 'text/event-stream; charset=utf-8' }),
    token: (i, finish) => chunk(tokenOut(id.offset, i, finish), finish) + (finish ? tail(i + 1) : ''),
    tail: (n, finish) => chunk('', finish) + tail(n),
    body: (n, finish) =>
      json(200, `${head}[{"index":0,"text":${JSON.stringify(outputText(id.offset, n, finish))},"logprobs":null,"finish_reason":"${finish}","matched_stop":${matched(finish)}}],"usage":${usage(p, n, true)},"metadata":null}`),
  };
}

function chatEncoder(model: string, id: GenIdentity, p: number, includeUsage: boolean): GenEncoder {
  const head = `{"id":"chatcmpl-${id.hex}","object":"chat.completion.chunk","created":${id.createdSec},"model":${JSON.stringify(model)},"choices":`;
  const role = sse(`${head}[{"index":0,"delta":{"reasoning_content":null,"role":"assistant","content":""},"logprobs":null,"finish_reason":null,"matched_stop":null}]}`);
  const content = (text: string): string => sse(`${head}[{"index":0,"delta":{"reasoning_content":null,"content":${JSON.stringify(text)}},"logprobs":null,"finish_reason":null,"matched_stop":null}]}`);
  const tail = (n: number, finish: FinishReason): string =>
    sse(`${head}[{"index":0,"delta":{"reasoning_content":null},"logprobs":null,"finish_reason":"${finish}","matched_stop":${matched(finish)}}]}`) +
    (includeUsage ? sse(`${head}[],"usage":${usage(p, n, true)}}`) : '') +
    SSE_DONE;
  return {
    delimiter: '\n\n',
    streamHeaders: () => ({ 'content-type': 'text/event-stream; charset=utf-8' }),
    // the EOS token of a natural stop has no text, so no content chunk: only the finish chunk
    token: (i, finish) => (i === 0 ? role : '') + (finish === 'stop' ? '' : content(tokenText(id.offset, i))) + (finish ? tail(i + 1, finish) : ''),
    tail: (n, finish) => (n === 0 ? role : '') + tail(n, finish),
    body: (n, finish) =>
      json(
        200,
        `{"id":"chatcmpl-${id.hex}","object":"chat.completion","created":${id.createdSec},"model":${JSON.stringify(model)},"choices":[{"index":0,"message":{"role":"assistant","content":${JSON.stringify(outputText(id.offset, n, finish))},"reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":"${finish}","matched_stop":${matched(finish)}}],"usage":${usage(p, n, true)},"metadata":null}`,
      ),
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
    const enc = chat ? chatEncoder(model, id, r.prompt.tokens, r.includeUsage === true) : completionEncoder(model, id, r.prompt.tokens, r.includeUsage === true);
    return { promptTokens: r.prompt.tokens, maxTokens: len.maxTokens, ignoreEos: r.ignoreEos, minTokens: r.minTokens, stream: r.stream, encoder: enc };
  };
}

export const sglangCompletions = openAi(false);
export const sglangChat = openAi(true);
