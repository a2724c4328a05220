/**
 * LMDeploy v0.15 (wire-formats.md §5; the last release with both native /generate and
 * /v1/chat/interactive). OpenAI chunks use the v0.14+ shape: exclude_none dicts re-serialised with
 * Python json.dumps (", " / ": " separators, \uXXXX escapes), every delta repeats role, finish_reason
 * absent until set, `"usage": null` only with include_usage and then a compact usage chunk; chat ids
 * chatcmpl-<22-char shortuuid>, completions id = str(session_id) ("-1" by default). Native /generate:
 * per-event delta text and output_ids, cumulative completion_tokens. /v1/chat/interactive: NDJSON under
 * an SSE content type. Errors: flat {message,type,code,param,object} with type invalid_request_error.
 * Non-stream bodies follow the pydantic models (compact, nulls kept); their exact null-field set is inferred.
 */
import { countChat, countPrompt, inlineOutputText, inlineTokenOut, splitOutput, tokenId, tokenOut } from './filler.js';
import { pyString } from './json.js';
import { renderMetrics, vllmMetricLines } from './metrics.js';
import { alnumId, readOpenAi, SSE_DONE, sse } from './openai-common.js';
import { lmdeployLengthMessage } from './length-errors.js';
import { asObj, bool, firstInt, int, resolveMax, type Obj } from './request.js';
import { empty, json, type EngineWire, type FinishReason, type GenEncoder, type GenIdentity, type GenPlan, type HttpReply, type Route, type WireContext } from './types.js';
import { promptIds } from './vllm.js';

export const LMDEPLOY_VERSION = '0.15.0';

export function lmdeployError(status: number, message: string): HttpReply {
  return json(status, JSON.stringify({ message, type: 'invalid_request_error', code: status, param: null, object: 'error' }));
}

// lmdeploy's UsageInfo has no reasoning count: clients count reasoning tokens from reasoning_content.
function usage(p: number, n: number): string {
  return `{"prompt_tokens":${p},"total_tokens":${p + n},"completion_tokens":${n},"prompt_tokens_details":{"cached_tokens":0}}`;
}

function openAiEncoder(chat: boolean, ctx: WireContext, id: GenIdentity, p: number, includeUsage: boolean, sessionId: string): GenEncoder {
  const rid = chat ? 'chatcmpl-' + alnumId(id.hex, 22) : sessionId;
  const object = chat ? 'chat.completion.chunk' : 'text_completion';
  const spaced = `{"id": ${pyString(rid)}, "object": "${object}", "created": ${id.createdSec}, "model": ${pyString(ctx.model)}, "choices": [{"index": 0, `;
  const compact = `{"id":${JSON.stringify(rid)},"object":"${object}","created":${id.createdSec},"model":${JSON.stringify(ctx.model)},"choices":`;
  // --reasoning-tokens: chat runs a reasoning parser (--reasoning-parser), whose deltas carry reasoning_content
  // (content left out by exclude_none); /v1/completions has none, so the reasoning stays inline.
  const delta = (t: string, i: number): string =>
    i < (id.reasoning ?? 0) ? `"delta": {"role": "assistant", "reasoning_content": ${pyString(t)}}` : `"delta": {"role": "assistant", "content": ${pyString(t)}}`;
  const chunk = (t: string, finish: FinishReason | null, i: number): string =>
    sse(spaced + (chat ? delta(t, i) : `"text": ${pyString(t)}`) + (finish ? `, "finish_reason": "${finish}"` : '') + '}]' + (includeUsage ? ', "usage": null}' : '}'));
  const tail = (n: number): string => (includeUsage ? sse(`${compact}[],"usage":${usage(p, n)}}`) : '') + SSE_DONE;
  const text = (i: number, finish: FinishReason | null): string => (chat ? tokenOut(id.offset, i, finish) : inlineTokenOut(id.offset, id.reasoning, i, finish));
  return {
    delimiter: '\n\n',
    streamHeaders: () => ({ 'content-type': 'text/event-stream; charset=utf-8' }),
    token: (i, finish) => chunk(text(i, finish), finish, i) + (finish ? tail(i + 1) : ''),
    tail: (n, finish) => chunk('', finish, n) + tail(n),
    body: (n, finish) => {
      const split = splitOutput(id.offset, id.reasoning, n, finish);
      const thought = id.reasoning ? JSON.stringify(split.reasoning) : 'null';
      const choice = chat
        ? `{"index":0,"message":{"role":"assistant","content":${JSON.stringify(split.answer)},"gen_tokens":null,"reasoning_content":${thought},"tool_calls":null},"logprobs":null,"finish_reason":"${finish}"}`
        : `{"index":0,"text":${JSON.stringify(inlineOutputText(id.offset, id.reasoning, n, finish))},"logprobs":null,"gen_tokens":null,"finish_reason":"${finish}"}`;
      return json(200, `{"id":${JSON.stringify(rid)},"object":"${chat ? 'chat.completion' : 'text_completion'}","created":${id.createdSec},"model":${JSON.stringify(ctx.model)},"choices":[${choice}],"usage":{"prompt_tokens":${p},"total_tokens":${p + n},"completion_tokens":${n}}}`);
    },
  };
}

function checkModel(ctx: WireContext, body: Obj | undefined): HttpReply | undefined {
  const model = body?.['model'];
  if (model === undefined) return json(422, JSON.stringify({ detail: [{ type: 'missing', loc: ['body', 'model'], msg: 'Field required', input: body ?? null }] }));
  if (model !== ctx.model) return lmdeployError(404, `The model '${String(model)}' does not exist.`);
  return undefined;
}

function openAi(chat: boolean) {
  return (ctx: WireContext, input: { body: unknown }, id: GenIdentity): GenPlan | HttpReply => {
    const r = readOpenAi(input.body, chat);
    if (typeof r === 'string') return lmdeployError(400, r);
    const bad = checkModel(ctx, r.body);
    if (bad) return bad;
    if (!r.prompt.ok) return lmdeployError(400, r.prompt.message);
    const len = resolveMax(ctx.maxModelLen, r.prompt.tokens, r.requestedMax, chat ? 'remaining' : 16);
    if (!len.ok) return lmdeployError(400, lmdeployLengthMessage(r.prompt.tokens, len.maxTokens, ctx.maxModelLen));
    // min_new_tokens exists on chat only (not /v1/completions)
    const minNew = chat ? int(r.body, 'min_new_tokens') : undefined;
    const session = int(r.body, 'session_id') ?? -1;
    return {
      promptTokens: r.prompt.tokens,
      maxTokens: len.maxTokens,
      ignoreEos: r.ignoreEos,
      minTokens: minNew !== undefined && minNew > 0 ? minNew : undefined,
      stream: r.stream,
      encoder: openAiEncoder(chat, ctx, id, r.prompt.tokens, r.includeUsage === true, String(session)),
    };
  };
}

function nativeEncoder(id: GenIdentity, p: number): GenEncoder {
  const obj = (t: string, ids: string, n: number, finish: FinishReason | null): string =>
    `{"text":${JSON.stringify(t)},"output_ids":[${ids}],"meta_info":{"prompt_tokens":${p},"completion_tokens":${n},"finish_reason":${finish ? `{"type":"${finish === 'abort' ? 'abort' : finish}"}` : 'null'},"output_token_logprobs":null,"routed_experts":null}}`;
  return {
    delimiter: '\n\n',
    streamHeaders: () => ({ 'content-type': 'text/event-stream; charset=utf-8' }),
    token: (i, finish) => sse(obj(inlineTokenOut(id.offset, id.reasoning, i, finish), String(finish === 'stop' ? 128009 : tokenId(id.offset, i)), i + 1, finish)) + (finish ? SSE_DONE : ''),
    tail: (n, finish) => sse(obj('', '', n, finish)) + SSE_DONE,
    body: (n, finish) => {
      const ids: number[] = [];
      for (let i = 0; i < n; i++) ids.push(finish === 'stop' && i === n - 1 ? 128009 : tokenId(id.offset, i));
      return json(200, obj(inlineOutputText(id.offset, id.reasoning, n, finish), ids.join(','), n, finish));
    },
  };
}

function nativeGenerate(ctx: WireContext, input: { body: unknown }, id: GenIdentity): GenPlan | HttpReply {
  const o = asObj(input.body);
  if (!o) return lmdeployError(400, 'request body must be a JSON object');
  if ((o['prompt'] === undefined) === (o['input_ids'] === undefined)) return lmdeployError(400, 'You must specify exactly one of prompt or input_ids');
  const pc = countPrompt(o['prompt'] ?? o['input_ids']);
  if (!pc.ok) return lmdeployError(400, pc.message);
  const len = resolveMax(ctx.maxModelLen, pc.tokens, int(o, 'max_tokens'), 128);
  if (!len.ok) return lmdeployError(400, lmdeployLengthMessage(pc.tokens, len.maxTokens, ctx.maxModelLen));
  return { promptTokens: pc.tokens, maxTokens: len.maxTokens, ignoreEos: bool(o, 'ignore_eos') === true, stream: bool(o, 'stream') === true, encoder: nativeEncoder(id, pc.tokens) };
}

function interactiveEncoder(id: GenIdentity, p: number): GenEncoder {
  const obj = (t: string, n: number, finish: FinishReason | null): string =>
    `{"text":${JSON.stringify(t)},"tokens":${n},"input_tokens":${p},"history_tokens":0,"finish_reason":${finish ? `"${finish}"` : 'null'}}`;
  return {
    delimiter: '\n',
    streamHeaders: () => ({ 'content-type': 'text/event-stream; charset=utf-8' }),
    token: (i, finish) => obj(inlineTokenOut(id.offset, id.reasoning, i, finish), i + 1, finish) + '\n',
    tail: (n, finish) => obj('', n, finish) + '\n',
    body: (n, finish) => json(200, obj(inlineOutputText(id.offset, id.reasoning, n, finish), n, finish)),
  };
}

function interactive(ctx: WireContext, input: { body: unknown }, id: GenIdentity): GenPlan | HttpReply {
  const o = asObj(input.body);
  if (!o) return lmdeployError(400, 'request body must be a JSON object');
  const pc = typeof o['prompt'] === 'string' ? countPrompt(o['prompt']) : countChat(o['prompt']);
  if (!pc.ok) return lmdeployError(400, pc.message);
  const len = resolveMax(ctx.maxModelLen, pc.tokens, firstInt(o, 'request_output_len'), 512, true);
  if (!len.ok) return json(200, JSON.stringify({ text: '', tokens: 0, input_tokens: pc.tokens, history_tokens: 0, finish_reason: 'length' }));
  const minNew = int(o, 'min_new_tokens');
  return {
    promptTokens: pc.tokens,
    maxTokens: len.maxTokens,
    ignoreEos: bool(o, 'ignore_eos') === true,
    minTokens: minNew !== undefined && minNew > 0 ? minNew : undefined,
    stream: bool(o, 'stream') === true,
    encoder: interactiveEncoder(id, pc.tokens),
  };
}

function encode(body: unknown): HttpReply {
  const o = asObj(body);
  const input = o?.['input'];
  const bos = bool(o, 'add_bos') !== false;
  const one = (s: string): number[] => {
    const pc = countPrompt(s, bos);
    return pc.ok ? promptIds(pc.tokens) : [];
  };
  if (typeof input === 'string') {
    const ids = one(input);
    return json(200, JSON.stringify({ input_ids: ids, length: ids.length }));
  }
  if (Array.isArray(input) && input.every((x) => typeof x === 'string')) {
    const ids = (input as string[]).map(one);
    return json(200, JSON.stringify({ input_ids: ids, length: ids.map((x) => x.length) }));
  }
  return lmdeployError(400, 'input must be a string or a list of strings');
}

function models(ctx: WireContext): string {
  const c = ctx.startedAtSec;
  const perm = { id: `modelperm-${alnumId('5eed5eed', 22)}`, object: 'model_permission', created: c, allow_create_engine: false, allow_sampling: true, allow_logprobs: true, allow_search_indices: true, allow_view: true, allow_fine_tuning: false, organization: '*', group: null, is_blocking: false };
  return JSON.stringify({ object: 'list', data: [{ id: ctx.model, object: 'model', created: c, owned_by: 'lmdeploy', root: ctx.model, parent: null, permission: [perm] }] });
}

const routes: Route[] = [
  { method: 'POST', path: '/v1/chat/completions', kind: 'generate', handle: openAi(true) },
  { method: 'POST', path: '/v1/completions', kind: 'generate', handle: openAi(false) },
  { method: 'POST', path: '/generate', kind: 'generate', handle: nativeGenerate },
  { method: 'POST', path: '/v1/chat/interactive', kind: 'generate', handle: interactive },
  { method: 'POST', path: '/v1/encode', kind: 'static', handle: (_c, i) => encode(i.body) },
  // lmdeploy's api_server has the route but no embeddings: every request gets this 400.
  { method: 'POST', path: '/v1/embeddings', kind: 'static', handle: () => lmdeployError(400, 'Unsupported by turbomind.') },
  { method: 'GET', path: '/v1/models', kind: 'static', handle: (ctx) => json(200, models(ctx)) },
  { method: 'GET', path: '/health', kind: 'static', handle: () => empty(200) },
];

export const lmdeployWire: EngineWire = {
  kind: 'lmdeploy',
  version: LMDEPLOY_VERSION,
  routes,
  commonHeaders: { server: 'uvicorn' },
  notFound: () => json(404, '{"detail":"Not Found"}'),
  badJson: (_p, message) => json(422, JSON.stringify({ detail: [{ type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error', input: {}, ctx: { error: message } }] })),
  errorReply: (status, message) => lmdeployError(status, message),
  // lmdeploy documents only the `lmdeploy:` prefix, not the names: vLLM's names stand in
  metrics: (ctx, s) => renderMetrics(vllmMetricLines(ctx, s)),
};
