/**
 * SGLang 0.5.x (wire-formats.md §4). Native /generate: `data: ` + orjson, cumulative `text` and
 * `output_ids` (default, no --incremental-streaming-output), meta_info in recent key order, finish
 * objects {"type":"length","length":N} / {"type":"stop","matched":id}, e2e_latency on the last event,
 * `[DONE]`. OpenAI routes: model echoed verbatim, `matched_stop`, msgspec chat chunks with
 * "reasoning_content":null, a separate finish chunk, usage with reasoning_tokens; flat errors.
 */
import { countPrompt, countTextTokens, fillerIds, inlineTokenOut, tokenId } from './filler.js';
import { renderMetrics, vllmMetricLines, type MetricLine } from './metrics.js';
import { embeddingsRoute } from './embeddings.js';
import { SGLANG_EOS_ID, sglangChat, sglangCompletions, sglangFlatError, sglangLengthMessage } from './sglang-openai.js';
import { asObj, bool, int, resolveMax } from './request.js';
import { empty, json, type EngineWire, type FinishReason, type GenEncoder, type GenIdentity, type GenPlan, type GenTimings, type HttpReply, type Route, type WireContext } from './types.js';
import { promptIds } from './vllm.js';

export const SGLANG_VERSION = '0.5.4';
function finishObj(finish: FinishReason, count: number): string {
  return finish === 'stop' ? `{"type":"stop","matched":${SGLANG_EOS_ID}}` : finish === 'abort' ? '{"type":"abort","message":"Abort in waiting queue"}' : `{"type":"length","length":${count}}`;
}

/**
 * `spec_verify_ct` on the finishing meta_info when speculative decoding runs (as SGLang's tokenizer manager adds
 * it): the verify passes after the prefill, which made the first token.
 */
function specMeta(spec: boolean, finish: FinishReason | null, t: GenTimings): string {
  return spec && finish ? `,"spec_verify_ct":${Math.max(0, (t.tokenSteps ?? 0) - 1)}` : '';
}

function nativeEncoder(id: GenIdentity, promptTokens: number, spec: boolean): GenEncoder {
  let text = '';
  let ids = '';
  let have = 0;
  const grow = (n: number, finish: FinishReason | null): void => {
    for (; have < n; have++) {
      const last = have === n - 1 && finish === 'stop';
      text += last ? '' : inlineTokenOut(id.offset, id.reasoning, have, null);
      ids += (have ? ',' : '') + (last ? SGLANG_EOS_ID : tokenId(id.offset, have));
    }
  };
  const obj = (n: number, finish: FinishReason | null, t: GenTimings): string => {
    grow(n, finish);
    const meta = `"meta_info":{"id":"${id.hex}","finish_reason":${finish ? finishObj(finish, n) : 'null'},"prompt_tokens":${promptTokens},"weight_version":"default","total_retractions":0,"completion_tokens":${n},"cached_tokens":${t.cachedTokens ?? 0}`;
    const e2e = specMeta(spec, finish, t) + (finish ? `,"e2e_latency":${Math.max(0, (t.nowMs - t.arrivalMs) / 1000)}` : '');
    return `{"text":${JSON.stringify(text)},"output_ids":[${ids}],${meta}${e2e}}}`;
  };
  return {
    delimiter: '\n\n',
    streamHeaders: () => ({ 'content-type': 'text/event-stream; charset=utf-8' }),
    token: (i, finish, t) => 'data: ' + obj(i + 1, finish, t) + '\n\n' + (finish ? 'data: [DONE]\n\n' : ''),
    // A speculative step's tokens leave in one event, as SGLang streams them.
    tokens: (from, n, finish, t) => 'data: ' + obj(from + n, finish, t) + '\n\n' + (finish ? 'data: [DONE]\n\n' : ''),
    tail: (count, finish, t) => 'data: ' + obj(count, finish, t) + '\n\n' + 'data: [DONE]\n\n',
    body: (count, finish, t) => json(200, obj(count, finish, t)),
  };
}

function nativeGenerate(ctx: WireContext, input: { body: unknown }, id: GenIdentity): GenPlan | HttpReply {
  const o = asObj(input.body);
  const stream = bool(o, 'stream') === true;
  const fail = (message: string): HttpReply =>
    stream
      ? { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8' }, body: `data: ${JSON.stringify({ error: { message } })}\n\ndata: [DONE]\n\n` }
      : json(400, JSON.stringify({ error: { message } }));
  if (!o) return fail('request body must be a JSON object');
  const pc = countPrompt(o['text'] ?? o['input_ids']);
  if (!pc.ok) return fail(pc.message);
  const sp = asObj(o['sampling_params']);
  const len = resolveMax(ctx.maxModelLen, pc.tokens, int(sp, 'max_new_tokens'), 128);
  if (!len.ok) return fail(sglangLengthMessage(len));
  const minNew = int(sp, 'min_new_tokens');
  return {
    promptTokens: pc.tokens,
    maxTokens: len.maxTokens,
    ignoreEos: bool(sp, 'ignore_eos') === true,
    minTokens: minNew !== undefined && minNew > 0 ? minNew : undefined,
    stream,
    encoder: nativeEncoder(id, pc.tokens, ctx.specDecode !== undefined),
  };
}

function modelCard(ctx: WireContext): Record<string, unknown> {
  return { id: ctx.model, object: 'model', created: ctx.startedAtSec, owned_by: 'sglang', root: ctx.model, parent: null, max_model_len: ctx.maxModelLen };
}

function serverInfo(ctx: WireContext, s: Parameters<EngineWire['metrics']>[1]): string {
  return JSON.stringify({
    model_path: ctx.model,
    tokenizer_path: ctx.model,
    host: '127.0.0.1',
    tp_size: ctx.gpus,
    dp_size: 1,
    context_length: ctx.maxModelLen,
    quantization: ctx.quant ?? null,
    max_running_requests: null,
    chunked_prefill_size: 8192,
    max_total_num_tokens: s.kvBlocksTotal * 16,
    max_req_input_len: ctx.maxModelLen - 5,
    internal_states: [{ last_gen_throughput: 0, load: s.running + s.waiting }],
    version: SGLANG_VERSION,
  });
}

/**
 * `POST /v1/tokenize` (alias `/tokenize`), SGLang's OpenAIServingTokenize: `prompt` is a string (→ `tokens` ids and
 * `count`) or a list of strings, each encoded on its own (→ a list of id lists and a list of counts, even for one),
 * so a client counts a whole batch in one request. `add_special_tokens` (default true) adds BOS.
 */
function tokenize(ctx: WireContext, body: unknown): HttpReply {
  const o = asObj(body);
  const prompt = o?.['prompt'];
  const bos = o?.['add_special_tokens'] !== false;
  const count = (text: string): number => countTextTokens(text) + (bos ? 1 : 0);
  const ids = (tokens: number): number[] => (bos ? promptIds(tokens) : fillerIds(0, tokens));
  const reply = (tokens: unknown, count: unknown): HttpReply => json(200, JSON.stringify({ tokens, count, max_model_len: ctx.maxModelLen }));
  if (typeof prompt === 'string') return reply(ids(count(prompt)), count(prompt));
  if (Array.isArray(prompt) && prompt.every((p) => typeof p === 'string')) {
    const counts = prompt.map(count);
    return reply(counts.map(ids), counts);
  }
  // Pydantic refuses anything else before the handler runs (TokenizeRequest.prompt: Union[str, List[str]]).
  return sglangFlatError(400, 'prompt must be a string or a list of strings');
}

const routes: Route[] = [
  { method: 'POST', path: '/generate', kind: 'generate', handle: nativeGenerate },
  { method: 'PUT', path: '/generate', kind: 'generate', handle: nativeGenerate },
  { method: 'POST', path: '/v1/completions', kind: 'generate', handle: sglangCompletions },
  { method: 'POST', path: '/v1/chat/completions', kind: 'generate', handle: sglangChat },
  embeddingsRoute('sglang', sglangFlatError),
  { method: 'POST', path: '/v1/tokenize', kind: 'static', handle: (ctx, i) => tokenize(ctx, i.body) },
  { method: 'POST', path: '/tokenize', kind: 'static', handle: (ctx, i) => tokenize(ctx, i.body) },
  { method: 'GET', path: '/v1/models', kind: 'static', handle: (ctx) => json(200, JSON.stringify({ object: 'list', data: [modelCard(ctx)] })) },
  {
    method: 'GET',
    path: /^\/v1\/models\/(.+)$/,
    kind: 'static',
    handle: (ctx, i) =>
      i.params[0] === ctx.model
        ? json(200, JSON.stringify(modelCard(ctx)))
        : json(404, JSON.stringify({ error: { message: `The model '${i.params[0] ?? ''}' does not exist`, type: 'invalid_request_error', param: 'model', code: 'model_not_found' } })),
  },
  {
    method: 'GET',
    path: '/get_model_info',
    kind: 'static',
    handle: (ctx) => json(200, JSON.stringify({ model_path: ctx.model, tokenizer_path: ctx.model, is_generation: true, preferred_sampling_params: null, weight_version: 'default' })),
  },
  { method: 'GET', path: '/get_server_info', kind: 'static', handle: (ctx, _i, s) => json(200, serverInfo(ctx, s)) },
  { method: 'GET', path: '/health', kind: 'static', handle: () => empty(200) },
  { method: 'GET', path: '/health_generate', kind: 'static', handle: () => empty(200) },
  { method: 'GET', path: '/ping', kind: 'static', handle: () => empty(200) },
];

function metrics(ctx: WireContext, s: Parameters<EngineWire['metrics']>[1]): string {
  const labels = { model_name: ctx.model };
  const lines: MetricLine[] = [
    { name: 'sglang:prompt_tokens_total', type: 'counter', help: 'Number of prefill tokens processed.', value: s.promptTokensTotal, labels },
    { name: 'sglang:generation_tokens_total', type: 'counter', help: 'Number of generation tokens processed.', value: s.generationTokensTotal, labels },
    { name: 'sglang:num_running_reqs', type: 'gauge', help: 'The number of running requests.', value: s.running, labels },
    { name: 'sglang:num_queue_reqs', type: 'gauge', help: 'The number of requests in the waiting queue.', value: s.waiting, labels },
    // not in the documented SGLang set: vLLM's names stand in
    ...vllmMetricLines(ctx, s, new Set(['vllm:kv_cache_usage_perc', 'vllm:num_preemptions_total'])),
  ];
  if (ctx.prefixCaching) {
    // SGLang's gauge is the radix cache's hit rate of recent prefill batches (here: the last 32 admissions).
    lines.push({ name: 'sglang:cache_hit_rate', type: 'gauge', help: 'The prefix cache hit rate.', value: s.prefixCacheRecentHitRate, labels });
  }
  return renderMetrics(lines);
}

export const sglangWire: EngineWire = {
  kind: 'sglang',
  version: SGLANG_VERSION,
  routes,
  commonHeaders: { server: 'uvicorn' },
  notFound: () => json(404, '{"detail":"Not Found"}'),
  badJson: (path, message) => (path.startsWith('/v1/') ? sglangFlatError(400, `JSON decode error: ${message}`) : json(400, JSON.stringify({ error: { message: `JSON decode error: ${message}` } }))),
  errorReply: (status, message, path) => (path.startsWith('/v1/') ? sglangFlatError(status, message) : json(status, JSON.stringify({ error: { message } }))),
  metrics,
};
