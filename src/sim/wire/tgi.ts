/**
 * HuggingFace TGI v3.3.7 (cargo version 3.3.6-dev0), wire-formats.md §3: `data:` without a space,
 * 1-based `index`, token objects, the final event carrying `generated_text` + `details`
 * (with `input_length`), no `[DONE]`; in-band validation errors on HTTP 200 for /generate_stream;
 * `{"error","error_type"}` bodies; x-compute-* / x-prompt-tokens headers on /generate.
 * No ignore_eos / min tokens exist: output length is the model's natural length capped by max_new_tokens.
 * A natural stop streams the EOS token as a special token that generated_text excludes.
 */
import { encode, decode } from 'gpt-tokenizer/encoding/o200k_base';
import { countPrompt, inlineTokenOut, tokenId } from './filler.js';
import { renderMetrics, vllmMetricLines, type MetricLine } from './metrics.js';
import { asObj, bool, int, str } from './request.js';
import { tgiChat, tgiCompletions } from './tgi-openai.js';
import { TGI_EOS_ID, TGI_EOS_TEXT, TGI_VERSION, tgiError, tgiFinish, tgiGenerated, tgiLengthMessage, tgiResolveMax, tgiTimingHeaders } from './tgi-common.js';
import { empty, json, text, type EngineWire, type FinishReason, type GenEncoder, type GenIdentity, type GenPlan, type HttpReply, type Route, type WireContext } from './types.js';

function logprob(i: number): number {
  return -((i * 7) % 23) / 8 - 0.125;
}

function tokenJson(id: GenIdentity, i: number, eos: boolean): string {
  return eos
    ? `{"id":${TGI_EOS_ID},"text":"${TGI_EOS_TEXT}","logprob":${logprob(i)},"special":true}`
    : `{"id":${tokenId(id.offset, i)},"text":${JSON.stringify(inlineTokenOut(id.offset, id.reasoning, i, null))},"logprob":${logprob(i)},"special":false}`;
}

interface NativeOpts {
  details: boolean;
  fullText: string | undefined;
  promptTokens: number;
}

function nativeEncoder(id: GenIdentity, o: NativeOpts, compatArray: boolean): GenEncoder {
  const final = (count: number, finish: FinishReason): string =>
    `"generated_text":${JSON.stringify((o.fullText ?? '') + tgiGenerated(id, count, finish))},"details":` +
    (o.details ? `{"finish_reason":"${tgiFinish(finish)}","generated_tokens":${count},"seed":null,"input_length":${o.promptTokens}}` : 'null');
  const event = (i: number, finish: FinishReason | null, count: number): string =>
    `data:{"index":${i + 1},"token":${tokenJson(id, i, finish === 'stop')},` + (finish ? final(count, finish) : '"generated_text":null,"details":null') + '}\n\n';
  return {
    delimiter: '\n\n',
    streamHeaders: () => ({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-compute-type': 'gpu+optimized', 'x-accel-buffering': 'no' }),
    token: (i, finish) => event(i, finish, i + 1),
    tail: (count, finish) => event(count, finish, count + 1),
    body: (count, finish, t) => {
      let tokens = '';
      for (let i = 0; i < count; i++) tokens += (i ? ',' : '') + tokenJson(id, i, finish === 'stop' && i === count - 1);
      const obj =
        `{"generated_text":${JSON.stringify((o.fullText ?? '') + tgiGenerated(id, count, finish))}` +
        (o.details ? `,"details":{"finish_reason":"${tgiFinish(finish)}","generated_tokens":${count},"seed":null,"prefill":[],"tokens":[${tokens}]}}` : '}');
      return json(200, compatArray ? `[${obj}]` : obj, tgiTimingHeaders(t, o.promptTokens, count));
    },
  };
}

function native(mode: 'generate' | 'stream' | 'compat') {
  return (ctx: WireContext, input: { body: unknown }, id: GenIdentity): GenPlan | HttpReply => {
    const o = asObj(input.body);
    const inputs = str(o, 'inputs');
    if (!o || inputs === undefined) return text(422, 'Failed to deserialize the JSON body into the target type: missing field `inputs` at line 1 column 2');
    const p = asObj(o['parameters']);
    const stream = mode === 'stream' || (mode === 'compat' && bool(o, 'stream') === true);
    const inBand = (msg: string): HttpReply =>
      stream ? { status: 200, headers: { 'content-type': 'text/event-stream' }, body: `data:${JSON.stringify({ error: msg, error_type: 'validation' })}\n\n` } : tgiError(422, msg, 'validation');
    const temp = p?.['temperature'];
    if (typeof temp === 'number' && temp <= 0) return inBand('Input validation error: `temperature` must be strictly positive');
    if (stream && bool(p, 'decoder_input_details') === true) return inBand('Input validation error: `decoder_input_details` == true is not supported when streaming tokens');
    const pc = countPrompt(inputs);
    if (!pc.ok) return inBand(pc.message);
    const len = tgiResolveMax(ctx.maxModelLen, pc.tokens, int(p, 'max_new_tokens'));
    if (!len.ok) return inBand(tgiLengthMessage(len));
    const opts: NativeOpts = { details: bool(p, 'details') === true, fullText: bool(p, 'return_full_text') === true ? inputs : undefined, promptTokens: pc.tokens };
    return { promptTokens: pc.tokens, maxTokens: len.maxTokens, ignoreEos: false, stream, encoder: nativeEncoder(id, opts, mode === 'compat') };
  };
}

function tokenize(body: unknown): HttpReply {
  const inputs = str(asObj(body), 'inputs');
  if (inputs === undefined) return text(422, 'Failed to deserialize the JSON body into the target type: missing field `inputs` at line 1 column 2');
  const out: { id: number; text: string; start: number; stop: number }[] = [{ id: 128000, text: '<|begin_of_text|>', start: 0, stop: 0 }];
  let pos = 0;
  for (const tid of encode(inputs)) {
    const piece = decode([tid]);
    out.push({ id: tid, text: piece, start: pos, stop: pos + piece.length });
    pos += piece.length;
  }
  return json(200, JSON.stringify(out));
}

function info(ctx: WireContext): string {
  return JSON.stringify({
    model_id: ctx.model,
    model_sha: null,
    model_pipeline_tag: 'text-generation',
    max_concurrent_requests: 128,
    max_best_of: 2,
    max_stop_sequences: 4,
    max_input_tokens: ctx.maxModelLen - 1,
    max_total_tokens: ctx.maxModelLen,
    validation_workers: 2,
    max_client_batch_size: 4,
    router: 'text-generation-router',
    version: TGI_VERSION,
    sha: null,
    docker_label: null,
  });
}

const routes: Route[] = [
  { method: 'POST', path: '/generate', kind: 'generate', handle: native('generate') },
  { method: 'POST', path: '/generate_stream', kind: 'generate', handle: native('stream') },
  { method: 'POST', path: '/', kind: 'generate', handle: native('compat') },
  { method: 'POST', path: '/v1/chat/completions', kind: 'generate', handle: tgiChat },
  { method: 'POST', path: '/v1/completions', kind: 'generate', handle: tgiCompletions },
  { method: 'POST', path: '/tokenize', kind: 'static', handle: (_c, input) => tokenize(input.body) },
  { method: 'GET', path: '/info', kind: 'static', handle: (ctx) => json(200, info(ctx)) },
  { method: 'GET', path: '/v1/models', kind: 'static', handle: (ctx) => json(200, JSON.stringify({ object: 'list', data: [{ id: ctx.model, object: 'model', created: 0, owned_by: ctx.model }] })) },
  { method: 'GET', path: '/health', kind: 'static', handle: () => empty(200) },
  { method: 'GET', path: '/ping', kind: 'static', handle: () => empty(200) },
  { method: 'GET', path: '/', kind: 'static', handle: () => empty(200) },
];

function metrics(ctx: WireContext, s: Parameters<EngineWire['metrics']>[1]): string {
  const lines: MetricLine[] = [
    { name: 'tgi_request_count', type: 'counter', help: 'Total number of requests', value: s.requestsTotal },
    { name: 'tgi_request_success', type: 'counter', help: 'Number of successful requests', value: s.requestsFinishedTotal },
    { name: 'tgi_request_failure', type: 'counter', help: 'Number of failed requests', value: s.requestsFailedTotal, labels: { err: 'generation' } },
    { name: 'tgi_batch_current_size', type: 'gauge', help: 'Current batch size', value: s.running },
    { name: 'tgi_queue_size', type: 'gauge', help: 'Current queue size', value: s.waiting },
    // TGI documents no KV-usage or preemption metric: vLLM's names stand in
    ...vllmMetricLines(ctx, s, new Set(['vllm:kv_cache_usage_perc', 'vllm:num_preemptions_total', 'vllm:prompt_tokens_total', 'vllm:generation_tokens_total'])),
  ];
  return renderMetrics(lines);
}

export const tgiWire: EngineWire = {
  kind: 'tgi',
  version: TGI_VERSION,
  routes,
  commonHeaders: {},
  notFound: () => ({ status: 404, headers: {}, body: '' }),
  badJson: (_p, message) => text(400, `Failed to parse the request body as JSON: ${message}`),
  errorReply: (status, message) =>
    status === 429 ? tgiError(429, 'Model is overloaded', 'overloaded') : status === 503 ? tgiError(503, 'unhealthy', 'healthcheck') : tgiError(status, message, 'incomplete_generation'),
  metrics,
};
