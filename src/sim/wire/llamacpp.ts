/**
 * llama.cpp `llama-server`, mid-2025 builds (b6100; wire-formats.md §6). Every response has
 * `Server: llama.cpp`. /completion: `data: ` + insertion-ordered compact JSON, partial events with
 * content/tokens/stop:false/id_slot -1/tokens_predicted/tokens_evaluated, a separate final event
 * (content "", stop:true, stop_type, generation_settings, timings) and no `[DONE]`. The EOS token of a
 * natural stop sends no partial but counts in tokens_predicted. n_predict is clamped to the context.
 */
import { countPrompt, inlineOutputText, inlineTokenOut, tokenId, tokenText } from './filler.js';
import { llamaChat, llamaCompletionsOai } from './llamacpp-oai.js';
import { LLAMA_BUILD, llamaError, llamaModelName, timingsJson } from './llamacpp-common.js';
import { renderMetrics, vllmMetricLines, type MetricLine } from './metrics.js';
import { embeddingsRoute } from './embeddings.js';
import { LLAMA_CONTEXT_MESSAGE } from './length-errors.js';
import { asObj, bool, firstInt, resolveMax } from './request.js';
import { json, type EngineWire, type FinishReason, type GenEncoder, type GenIdentity, type GenPlan, type GenTimings, type HttpReply, type Route, type WireContext } from './types.js';
import { promptIds } from './vllm.js';

interface NativeOpts {
  promptTokens: number;
  promptText: string;
  nPredict: number;
  ignoreEos: boolean;
  stream: boolean;
  temperature: number;
}

function settings(o: NativeOpts): string {
  return `{"seed":4294967295,"temperature":${o.temperature},"top_k":40,"top_p":0.949999988079071,"min_p":0.05000000074505806,"n_predict":${o.nPredict},"ignore_eos":${o.ignoreEos},"stream":${o.stream}}`;
}

function nativeEncoder(ctx: WireContext, id: GenIdentity, o: NativeOpts): GenEncoder {
  const model = JSON.stringify(llamaModelName(ctx));
  const partial = (i: number): string =>
    `data: {"index":0,"content":${JSON.stringify(inlineTokenOut(id.offset, id.reasoning, i, null))},"tokens":[${tokenId(id.offset, i)}],"stop":false,"id_slot":-1,"tokens_predicted":${i + 1},"tokens_evaluated":${o.promptTokens}}\n\n`;
  const final = (content: string, n: number, finish: FinishReason, t: GenTimings): string =>
    `{"index":0,"content":${JSON.stringify(content)},"tokens":[],"id_slot":0,"stop":true,"model":${model},"tokens_predicted":${n},"tokens_evaluated":${o.promptTokens},"generation_settings":${settings(o)},"prompt":${JSON.stringify('<|begin_of_text|>' + o.promptText)},"has_new_line":false,"truncated":false,"stop_type":"${finish === 'stop' ? 'eos' : finish === 'length' ? 'limit' : 'none'}","stopping_word":"","tokens_cached":${o.promptTokens + n},"timings":${timingsJson(t, o.promptTokens, n)}}`;
  return {
    delimiter: '\n\n',
    streamHeaders: () => ({ 'content-type': 'text/event-stream' }),
    token: (i, finish, t) => (finish === 'stop' ? '' : partial(i)) + (finish ? `data: ${final('', i + 1, finish, t)}\n\n` : ''),
    tail: (n, finish, t) => `data: ${final('', n, finish, t)}\n\n`,
    body: (n, finish, t) => json(200, final(inlineOutputText(id.offset, id.reasoning, n, finish), n, finish, t), { 'content-type': 'application/json; charset=utf-8' }),
  };
}

function completion(ctx: WireContext, input: { body: unknown }, id: GenIdentity): GenPlan | HttpReply {
  const o = asObj(input.body);
  if (!o) return llamaError(400, 'request body must be a JSON object', 'invalid_request_error');
  const pc = countPrompt(o['prompt']);
  if (!pc.ok) return llamaError(400, '"prompt" must be a string, a list of tokens, a list of mixed strings & tokens, or a list of prompts', 'invalid_request_error');
  const requested = firstInt(o, 'n_predict', 'max_tokens');
  const len = resolveMax(ctx.maxModelLen, pc.tokens, requested === undefined || requested < 0 ? undefined : requested, 'remaining', true);
  if (!len.ok) return llamaError(400, LLAMA_CONTEXT_MESSAGE, 'exceed_context_size_error', { n_prompt_tokens: pc.tokens, n_ctx: ctx.maxModelLen });
  const stream = bool(o, 'stream') === true;
  const ignoreEos = bool(o, 'ignore_eos') === true;
  const temperature = typeof o['temperature'] === 'number' ? o['temperature'] : 0.8;
  const opts: NativeOpts = { promptTokens: pc.tokens, promptText: pc.text, nPredict: requested ?? -1, ignoreEos, stream, temperature };
  return { promptTokens: pc.tokens, maxTokens: len.maxTokens, ignoreEos, stream, encoder: nativeEncoder(ctx, id, opts) };
}

function props(ctx: WireContext): string {
  return JSON.stringify({
    default_generation_settings: {
      id: 0,
      id_task: -1,
      n_ctx: ctx.maxModelLen,
      speculative: false,
      is_processing: false,
      params: { n_predict: -1, seed: 4294967295, temperature: 0.8, top_k: 40, top_p: 0.95, min_p: 0.05, ignore_eos: false, stream: false },
      prompt: '',
      next_token: { has_next_token: true, has_new_line: false, n_remain: -1, n_decoded: 0, stopping_word: '' },
    },
    total_slots: 4,
    model_path: `/models/${llamaModelName(ctx)}.gguf`,
    chat_template: "{{- bos_token }}{%- for message in messages %}{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}",
    modalities: { vision: false },
    build_info: LLAMA_BUILD,
    is_sleeping: false,
  });
}

function models(ctx: WireContext): string {
  const name = llamaModelName(ctx);
  return JSON.stringify({
    object: 'list',
    data: [{ id: name, object: 'model', created: ctx.startedAtSec, owned_by: 'llamacpp', meta: { vocab_type: 2, n_vocab: 128256, n_ctx_train: 131072, n_embd: 4096, n_params: 8030261312, size: 4912898304 } }],
  });
}

function tokenize(body: unknown): HttpReply {
  const o = asObj(body);
  const pc = countPrompt(o?.['content'] ?? '', bool(o, 'add_special') === true);
  if (!pc.ok) return llamaError(400, 'content must be a string', 'invalid_request_error');
  const ids = promptIds(pc.tokens);
  if (bool(o, 'with_pieces') === true) return json(200, JSON.stringify({ tokens: ids.map((t) => ({ id: t, piece: t >= 1000 && t < 1256 ? tokenText(t - 1000, 0) : '' })) }));
  return json(200, JSON.stringify({ tokens: ids }));
}

const routes: Route[] = [
  { method: 'POST', path: '/completion', kind: 'generate', handle: completion },
  { method: 'POST', path: '/completions', kind: 'generate', handle: completion },
  { method: 'POST', path: '/v1/completions', kind: 'generate', handle: llamaCompletionsOai },
  { method: 'POST', path: '/v1/chat/completions', kind: 'generate', handle: llamaChat },
  { method: 'POST', path: '/chat/completions', kind: 'generate', handle: llamaChat },
  // As if started with --embeddings (without it llama-server answers 501 here).
  embeddingsRoute('llamacpp', (status, message) => llamaError(status, message, status === 404 ? 'not_found_error' : 'invalid_request_error')),
  { method: 'POST', path: '/tokenize', kind: 'static', handle: (_c, i) => tokenize(i.body) },
  { method: 'GET', path: '/props', kind: 'static', handle: (ctx) => json(200, props(ctx), { 'content-type': 'application/json; charset=utf-8' }) },
  { method: 'GET', path: '/v1/models', kind: 'static', handle: (ctx) => json(200, models(ctx)) },
  { method: 'GET', path: '/models', kind: 'static', handle: (ctx) => json(200, models(ctx)) },
  { method: 'GET', path: '/health', kind: 'static', handle: () => json(200, '{"status":"ok"}') },
  { method: 'GET', path: '/v1/health', kind: 'static', handle: () => json(200, '{"status":"ok"}') },
];

function metrics(ctx: WireContext, s: Parameters<EngineWire['metrics']>[1]): string {
  const lines: MetricLine[] = [
    { name: 'llamacpp:prompt_tokens_total', type: 'counter', help: 'Number of prompt tokens processed.', value: s.promptTokensTotal },
    { name: 'llamacpp:tokens_predicted_total', type: 'counter', help: 'Number of generation tokens processed.', value: s.generationTokensTotal },
    { name: 'llamacpp:n_decode_total', type: 'counter', help: 'Total number of llama_decode() calls', value: s.stepsTotal },
    { name: 'llamacpp:requests_processing', type: 'gauge', help: 'Number of requests processing.', value: s.running },
    { name: 'llamacpp:requests_deferred', type: 'gauge', help: 'Number of requests deferred.', value: s.waiting },
    // llama.cpp documents no KV-usage or preemption metric: vLLM's names stand in
    ...vllmMetricLines(ctx, s, new Set(['vllm:kv_cache_usage_perc', 'vllm:num_preemptions_total'])),
  ];
  return renderMetrics(lines);
}

export const llamacppWire: EngineWire = {
  kind: 'llamacpp',
  version: LLAMA_BUILD,
  routes,
  commonHeaders: { server: 'llama.cpp' },
  notFound: () => llamaError(404, 'File Not Found', 'not_found_error'),
  badJson: (_p, message) => llamaError(400, message, 'invalid_request_error'),
  errorReply: (status, message) => llamaError(status, message, status === 500 ? 'server_error' : 'unavailable_error'),
  metrics,
};
