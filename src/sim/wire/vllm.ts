/**
 * vLLM OpenAI-compatible server, v0.11 shapes (wire-formats.md §1): completions chunks with
 * stop_reason/prompt_token_ids/token_ids nulls and a trailing "usage":null, role-only first chat chunk
 * with top-level prompt_token_ids, finish on the last token's chunk, usage chunk with empty choices
 * (key order prompt, total, completion), `data: [DONE]`, nested errors with an integer code.
 */
import { countChat, countPrompt, fillerIds, inlineOutputText, inlineStepText, inlineTokenOut, splitOutput, tokenOut, tokenText } from './filler.js';
import { renderMetrics, vllmMetricLines } from './metrics.js';
import { embeddingsRoute } from './embeddings.js';
import { SSE_DONE, readOpenAi, sse } from './openai-common.js';
import { vllmLengthMessage } from './length-errors.js';
import { asObj, resolveMax, type LengthCheck } from './request.js';
import { empty, json, type EngineWire, type FinishReason, type GenEncoder, type GenIdentity, type GenPlan, type GenTimings, type HttpReply, type Route, type WireContext } from './types.js';

export const VLLM_VERSION = '0.11.0';

const REASON: Record<number, string> = { 400: 'BadRequestError', 404: 'NotFoundError', 429: 'Too Many Requests', 500: 'InternalServerError', 503: 'Service Unavailable' };

export function vllmError(status: number, message: string, param: string | null = null): HttpReply {
  const type = REASON[status] ?? 'BadRequestError';
  return json(status, JSON.stringify({ error: { message, type, param, code: status } }));
}

/** The two context-length messages vLLM uses, shared with other engines that copied them. */
export function vllmLengthError(c: Exclude<LengthCheck, { ok: true }>): HttpReply {
  return vllmError(400, vllmLengthMessage(c), c.reason === 'prompt-too-long' ? 'input_tokens' : 'max_tokens');
}

/** The stream's usage chunk; `cached` is set when --enable-prompt-tokens-details is on. */
function usage(p: number, n: number, cached?: number): string {
  const details = cached === undefined ? '' : `,"prompt_tokens_details":{"cached_tokens":${cached}}`;
  return `{"prompt_tokens":${p},"total_tokens":${p + n},"completion_tokens":${n}${details}}`;
}

/** The non-stream body's prompt_tokens_details: null unless --enable-prompt-tokens-details. */
function detailsBody(ctx: WireContext, t: GenTimings): string {
  return ctx.promptTokensDetails ? `{"cached_tokens":${t.cachedTokens ?? 0}}` : 'null';
}

const cachedOf = (ctx: WireContext, t: GenTimings): number | undefined => (ctx.promptTokensDetails ? (t.cachedTokens ?? 0) : undefined);

function completionEncoder(ctx: WireContext, id: GenIdentity, promptTokens: number, includeUsage: boolean): GenEncoder {
  const head = `{"id":"cmpl-${id.hex}","object":"text_completion","created":${id.createdSec},"model":${JSON.stringify(ctx.model)},"choices":`;
  const chunk = (text: string, finish: FinishReason | null): string =>
    sse(`${head}[{"index":0,"text":${JSON.stringify(text)},"logprobs":null,"finish_reason":${finish ? `"${finish}"` : 'null'},"stop_reason":null,"prompt_token_ids":null,"token_ids":null}],"usage":null}`);
  const tail = (count: number, t: GenTimings): string => (includeUsage ? sse(`${head}[],"usage":${usage(promptTokens, count, cachedOf(ctx, t))}}`) : '') + SSE_DONE;
  return {
    delimiter: '\n\n',
    streamHeaders: () => ({ 'content-type': 'text/event-stream; charset=utf-8' }),
    // No reasoning parser on /v1/completions: a reasoning phase stays inline in the text.
    token: (i, finish, t) => (finish ? chunk(inlineTokenOut(id.offset, id.reasoning, i, finish), finish) + tail(i + 1, t) : chunk(inlineTokenOut(id.offset, id.reasoning, i, null), null)),
    // Speculative decoding: the step's tokens in one chunk.
    tokens: (from, n, finish, t) => chunk(inlineStepText(id.offset, id.reasoning, from, n, finish), finish) + (finish ? tail(from + n, t) : ''),
    tail: (count, finish, t) => chunk('', finish) + tail(count, t),
    body: (count, finish, t) =>
      json(
        200,
        `${head}[{"index":0,"text":${JSON.stringify(inlineOutputText(id.offset, id.reasoning, count, finish))},"logprobs":null,"finish_reason":"${finish}","stop_reason":null,"token_ids":null,"prompt_logprobs":null,"prompt_token_ids":null}],"service_tier":null,"system_fingerprint":null,"usage":{"prompt_tokens":${promptTokens},"total_tokens":${promptTokens + count},"completion_tokens":${count},"prompt_tokens_details":${detailsBody(ctx, t)}},"kv_transfer_params":null}`,
      ),
  };
}

function chatEncoder(ctx: WireContext, id: GenIdentity, promptTokens: number, includeUsage: boolean): GenEncoder {
  const head = `{"id":"chatcmpl-${id.hex}","object":"chat.completion.chunk","created":${id.createdSec},"model":${JSON.stringify(ctx.model)},"choices":`;
  const role = sse(`${head}[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"prompt_token_ids":null}`);
  const chunk = (text: string, finish: FinishReason | null, field = 'content'): string =>
    sse(`${head}[{"index":0,"delta":{"${field}":${JSON.stringify(text)}},"logprobs":null,"finish_reason":${finish ? `"${finish}","stop_reason":null` : 'null'},"token_ids":null}]}`);
  // With --reasoning-tokens the reasoning parser's field carries the first tokens (vLLM ≤ 0.11: reasoning_content).
  const piece = (i: number, finish: FinishReason | null): string =>
    i < (id.reasoning ?? 0) ? chunk(tokenText(id.offset, i), finish, 'reasoning_content') : chunk(tokenOut(id.offset, i, finish), finish);
  const tail = (count: number, t: GenTimings): string => (includeUsage ? sse(`${head}[],"usage":${usage(promptTokens, count, cachedOf(ctx, t))}}`) : '') + SSE_DONE;
  return {
    delimiter: '\n\n',
    streamHeaders: () => ({ 'content-type': 'text/event-stream; charset=utf-8' }),
    token: (i, finish, t) => (i === 0 ? role : '') + piece(i, finish) + (finish ? tail(i + 1, t) : ''),
    // Speculative decoding: the step's tokens in one chunk (two where it crosses from reasoning to answer).
    tokens: (from, n, finish, t) => {
      const r = id.reasoning ?? 0;
      let thought = '';
      let answer = '';
      for (let i = from; i < from + n; i++) {
        if (i < r) thought += tokenText(id.offset, i);
        else answer += tokenOut(id.offset, i, i === from + n - 1 ? finish : null);
      }
      const answers = from + n > r;
      return (from === 0 ? role : '') + (thought ? chunk(thought, answers ? null : finish, 'reasoning_content') : '') + (answers ? chunk(answer, finish) : '') + (finish ? tail(from + n, t) : '');
    },
    tail: (count, finish, t) => (count === 0 ? role : '') + chunk('', finish) + tail(count, t),
    body: (count, finish, t) => {
      const out = splitOutput(id.offset, id.reasoning, count, finish);
      return json(
        200,
        `{"id":"chatcmpl-${id.hex}","object":"chat.completion","created":${id.createdSec},"model":${JSON.stringify(ctx.model)},"choices":[{"index":0,"message":{"role":"assistant","content":${JSON.stringify(out.answer)},"refusal":null,"annotations":null,"audio":null,"function_call":null,"tool_calls":[],"reasoning_content":${id.reasoning ? JSON.stringify(out.reasoning) : 'null'}},"logprobs":null,"finish_reason":"${finish}","stop_reason":null}],"service_tier":null,"system_fingerprint":null,"usage":{"prompt_tokens":${promptTokens},"total_tokens":${promptTokens + count},"completion_tokens":${count},"prompt_tokens_details":${detailsBody(ctx, t)}},"prompt_logprobs":null,"kv_transfer_params":null}`,
      );
    },
  };
}

function generate(chat: boolean) {
  return (ctx: WireContext, input: { body: unknown }, id: GenIdentity): GenPlan | HttpReply => {
    const r = readOpenAi(input.body, chat);
    if (typeof r === 'string') return vllmError(400, r);
    if (r.model !== undefined && r.model !== ctx.model) return vllmError(404, `The model \`${r.model}\` does not exist.`, 'model');
    if (!r.prompt.ok) return vllmError(400, r.prompt.message, chat ? 'messages' : 'prompt');
    if (r.streamOptions && !r.stream) return vllmError(400, 'Stream options can only be defined when `stream=True`.', 'stream_options');
    const len = resolveMax(ctx.maxModelLen, r.prompt.tokens, r.requestedMax, chat ? 'remaining' : 16);
    if (!len.ok) return vllmLengthError(len);
    // vLLM's StreamOptions.include_usage defaults to true: `"stream_options":{}` already enables it
    const includeUsage = r.streamOptions !== undefined && r.includeUsage !== false;
    const enc = chat ? chatEncoder(ctx, id, r.prompt.tokens, includeUsage) : completionEncoder(ctx, id, r.prompt.tokens, includeUsage);
    return { promptTokens: r.prompt.tokens, maxTokens: len.maxTokens, ignoreEos: r.ignoreEos, minTokens: r.minTokens, stream: r.stream, encoder: enc };
  };
}

/** Fake token ids for a prompt: BOS then filler ids (the sim has no vocabulary). */
export function promptIds(n: number, ids?: number[]): number[] {
  if (ids) return ids;
  return n === 0 ? [] : [128000, ...fillerIds(0, n - 1)];
}

function tokenize(ctx: WireContext, body: unknown): HttpReply {
  const o = asObj(body);
  if (!o) return vllmError(400, 'request body must be a JSON object');
  const isChat = o['messages'] !== undefined;
  const pc = isChat ? countChat(o['messages']) : countPrompt(o['prompt'], o['add_special_tokens'] !== false);
  if (!pc.ok) return vllmError(400, pc.message, isChat ? 'messages' : 'prompt');
  const given = Array.isArray(o['prompt']) && (o['prompt'] as unknown[]).every((x) => Number.isInteger(x)) ? (o['prompt'] as number[]) : undefined;
  return json(200, JSON.stringify({ count: pc.tokens, max_model_len: ctx.maxModelLen, tokens: promptIds(pc.tokens, given), token_strs: null }));
}

function models(ctx: WireContext, id: string): string {
  const c = ctx.startedAtSec;
  return JSON.stringify({
    object: 'list',
    data: [
      {
        id: ctx.model,
        object: 'model',
        created: c,
        owned_by: 'vllm',
        root: ctx.model,
        parent: null,
        max_model_len: ctx.maxModelLen,
        permission: [
          {
            id: `modelperm-${id}`,
            object: 'model_permission',
            created: c,
            allow_create_engine: false,
            allow_sampling: true,
            allow_logprobs: true,
            allow_search_indices: false,
            allow_view: true,
            allow_fine_tuning: false,
            organization: '*',
            group: null,
            is_blocking: false,
          },
        ],
      },
    ],
  });
}

const routes: Route[] = [
  { method: 'POST', path: '/v1/completions', kind: 'generate', handle: generate(false) },
  { method: 'POST', path: '/v1/chat/completions', kind: 'generate', handle: generate(true) },
  embeddingsRoute('vllm', (status, message) => vllmError(status, message)),
  { method: 'POST', path: '/tokenize', kind: 'static', handle: (ctx, input) => tokenize(ctx, input.body) },
  {
    method: 'POST',
    path: '/detokenize',
    kind: 'static',
    handle: (_ctx, input) => {
      const toks = asObj(input.body)?.['tokens'];
      if (!Array.isArray(toks)) return vllmError(400, 'tokens must be a list of integers', 'tokens');
      return json(200, JSON.stringify({ prompt: toks.map((t) => (typeof t === 'number' && t >= 1000 && t < 1256 ? tokenText(t - 1000, 0) : '')).join('') }));
    },
  },
  { method: 'GET', path: '/v1/models', kind: 'static', handle: (ctx) => json(200, models(ctx, 'a1b2c3d4e5f60718293a4b5c6d7e8f90')) },
  { method: 'GET', path: '/version', kind: 'static', handle: () => json(200, JSON.stringify({ version: VLLM_VERSION })) },
  { method: 'GET', path: '/health', kind: 'static', handle: () => empty(200) },
  { method: 'GET', path: '/ping', kind: 'static', handle: () => empty(200) },
  { method: 'POST', path: '/ping', kind: 'static', handle: () => empty(200) },
];

export const vllmWire: EngineWire = {
  kind: 'vllm',
  version: VLLM_VERSION,
  routes,
  commonHeaders: { server: 'uvicorn' },
  notFound: () => json(404, '{"detail":"Not Found"}'),
  badJson: (_p, message) => vllmError(400, `JSON decode error: ${message}`, 'body'),
  errorReply: (status, message) => vllmError(status, message),
  metrics: (ctx, s) => renderMetrics(vllmMetricLines(ctx, s)),
};
