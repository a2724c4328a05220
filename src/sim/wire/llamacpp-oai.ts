/**
 * llama.cpp OpenAI-style routes: keys in `choices, created, id, model, system_fingerprint, object`
 * order (completions: `id` after usage), a role event with "content":null before the first text,
 * an empty-delta finish chunk, usage (chat: only with include_usage, in its own chunk; completions:
 * always, in the final chunk) and `timings` on the very last JSON event, then `[DONE]`.
 */
import { inlineOutputText, inlineTokenOut, splitOutput, tokenText } from './filler.js';
import { LLAMA_BUILD, llamaError, llamaModelName, timingsJson } from './llamacpp-common.js';
import { SSE_DONE, alnumId, readOpenAi, sse } from './openai-common.js';
import { LLAMA_CONTEXT_MESSAGE } from './length-errors.js';
import { resolveMax } from './request.js';
import { json, type FinishReason, type GenEncoder, type GenIdentity, type GenPlan, type GenTimings, type HttpReply, type WireContext } from './types.js';

const FP = `"system_fingerprint":"${LLAMA_BUILD}"`;

function usage(p: number, n: number): string {
  return `{"completion_tokens":${n},"prompt_tokens":${p},"total_tokens":${p + n}}`;
}

function finishName(f: FinishReason): string {
  return f === 'stop' ? 'stop' : 'length';
}

function chatEncoder(ctx: WireContext, id: GenIdentity, p: number, includeUsage: boolean): GenEncoder {
  const rid = 'chatcmpl-' + alnumId(id.hex, 32);
  const meta = `"created":${id.createdSec},"id":"${rid}","model":${JSON.stringify(llamaModelName(ctx))},${FP},"object":"chat.completion.chunk"`;
  const role = sse(`{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],${meta}}`);
  // --reasoning-tokens: llama-server's default reasoning format (deepseek) streams the thinking as reasoning_content.
  const content = (i: number): string => {
    const field = i < (id.reasoning ?? 0) ? 'reasoning_content' : 'content';
    return sse(`{"choices":[{"finish_reason":null,"index":0,"delta":{"${field}":${JSON.stringify(tokenText(id.offset, i))}}}],${meta}}`);
  };
  const message = (n: number, finish: FinishReason): string => {
    const out = splitOutput(id.offset, id.reasoning, n, finish);
    return `{"role":"assistant","content":${JSON.stringify(out.answer)}${out.reasoning ? `,"reasoning_content":${JSON.stringify(out.reasoning)}` : ''}}`;
  };
  const tail = (n: number, finish: FinishReason, t: GenTimings): string => {
    const timings = `"timings":${timingsJson(t, p, n)}`;
    const fin = `{"choices":[{"finish_reason":"${finishName(finish)}","index":0,"delta":{}}],${meta}`;
    return (includeUsage ? sse(fin + '}') + sse(`{"choices":[],${meta},"usage":${usage(p, n)},${timings}}`) : sse(`${fin},${timings}}`)) + SSE_DONE;
  };
  return {
    delimiter: '\n\n',
    streamHeaders: () => ({ 'content-type': 'text/event-stream' }),
    token: (i, finish, t) => (i === 0 ? role : '') + (finish === 'stop' ? '' : content(i)) + (finish ? tail(i + 1, finish, t) : ''),
    tail: (n, finish, t) => (n === 0 ? role : '') + tail(n, finish, t),
    body: (n, finish, t) =>
      json(
        200,
        `{"choices":[{"finish_reason":"${finishName(finish)}","index":0,"message":${message(n, finish)}}],"created":${id.createdSec},"model":${JSON.stringify(llamaModelName(ctx))},${FP},"object":"chat.completion","usage":{"completion_tokens":${n},"prompt_tokens":${p},"total_tokens":${p + n},"prompt_tokens_details":{"cached_tokens":0}},"id":"${rid}","timings":${timingsJson(t, p, n)}}`,
        { 'content-type': 'application/json; charset=utf-8' },
      ),
  };
}

function completionEncoder(ctx: WireContext, id: GenIdentity, p: number): GenEncoder {
  const rid = 'cmpl-' + alnumId(id.hex, 32);
  const meta = `"created":${id.createdSec},"model":${JSON.stringify(llamaModelName(ctx))},${FP},"object":"text_completion"`;
  const partial = (t: string): string => sse(`{"choices":[{"text":${JSON.stringify(t)},"index":0,"logprobs":null,"finish_reason":null}],${meta},"id":"${rid}"}`);
  const final = (text: string, n: number, finish: FinishReason, t: GenTimings): string =>
    `{"choices":[{"text":${JSON.stringify(text)},"index":0,"logprobs":null,"finish_reason":"${finishName(finish)}"}],${meta},"usage":${usage(p, n)},"id":"${rid}","timings":${timingsJson(t, p, n)}}`;
  return {
    delimiter: '\n\n',
    streamHeaders: () => ({ 'content-type': 'text/event-stream' }),
    token: (i, finish, t) => (finish === 'stop' ? '' : partial(inlineTokenOut(id.offset, id.reasoning, i, null))) + (finish ? sse(final('', i + 1, finish, t)) + SSE_DONE : ''),
    tail: (n, finish, t) => sse(final('', n, finish, t)) + SSE_DONE,
    body: (n, finish, t) => json(200, final(inlineOutputText(id.offset, id.reasoning, n, finish), n, finish, t), { 'content-type': 'application/json; charset=utf-8' }),
  };
}

function openAi(chat: boolean) {
  return (ctx: WireContext, input: { body: unknown }, id: GenIdentity): GenPlan | HttpReply => {
    const r = readOpenAi(input.body, chat);
    if (typeof r === 'string') return llamaError(400, r, 'invalid_request_error');
    if (!r.prompt.ok) return llamaError(400, r.prompt.message, 'invalid_request_error');
    const nPredict = typeof r.body['n_predict'] === 'number' ? r.body['n_predict'] : r.requestedMax;
    const len = resolveMax(ctx.maxModelLen, r.prompt.tokens, nPredict === undefined || nPredict < 0 ? undefined : nPredict, 'remaining', true);
    if (!len.ok) return llamaError(400, LLAMA_CONTEXT_MESSAGE, 'exceed_context_size_error', { n_prompt_tokens: r.prompt.tokens, n_ctx: ctx.maxModelLen });
    const enc = chat ? chatEncoder(ctx, id, r.prompt.tokens, r.includeUsage === true) : completionEncoder(ctx, id, r.prompt.tokens);
    return { promptTokens: r.prompt.tokens, maxTokens: len.maxTokens, ignoreEos: r.ignoreEos, stream: r.stream, encoder: enc };
  };
}

export const llamaChat = openAi(true);
export const llamaCompletionsOai = openAi(false);
