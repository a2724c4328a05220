/**
 * Triton Inference Server 2.71.0 with the TensorRT-LLM backend ensemble (≥0.14 output set;
 * wire-formats.md §7): generate extension under /v2/models/{m}[/versions/{v}]/generate[_stream],
 * `data: ` + compact JSON with keys in alphabetical order (std::map), text_output per token, no
 * finish reason, no counts and no terminator. Forced length: min_length / min_tokens ≥ max_tokens,
 * or end_id -1. Errors {"error":"…"}. Served model names: ensemble and tensorrt_llm_bls.
 */
import { countPrompt, inlineOutputText, inlineTokenOut } from './filler.js';
import { floatLit } from './json.js';
import { renderMetrics, vllmMetricLines, type MetricLine } from './metrics.js';
import { tritonLengthMessage } from './length-errors.js';
import { asObj, bool, int, resolveMax, str } from './request.js';
import { empty, json, type EngineWire, type FinishReason, type GenEncoder, type GenIdentity, type GenPlan, type HttpReply, type Route, type RouteInput, type WireContext } from './types.js';

export const TRITON_VERSION = '2.71.0';
const MODELS = new Set(['ensemble', 'tensorrt_llm_bls']);

function tritonError(status: number, message: string): HttpReply {
  return json(status, JSON.stringify({ error: message }));
}

function encoder(model: string, reqId: string | undefined, id: GenIdentity, echo: string): GenEncoder {
  const z = floatLit(0);
  const pre = `{"batch_index":0,"context_logits":${z},"cum_log_probs":${z},"generation_logits":${z},` + (reqId !== undefined ? `"id":${JSON.stringify(reqId)},` : '') + `"model_name":${JSON.stringify(model)},"model_version":"1","output_log_probs":`;
  const post = ',"sequence_end":false,"sequence_id":0,"sequence_index":0,"sequence_start":false,"text_output":';
  return {
    delimiter: '\n\n',
    streamHeaders: () => ({ 'content-type': 'text/event-stream; charset=utf-8' }),
    token: (i, finish: FinishReason | null) => `data: ${pre}[${z}]${post}${JSON.stringify(inlineTokenOut(id.offset, id.reasoning, i, finish))}}\n\n`,
    tail: () => '',
    body: (n, finish) => json(200, `${pre}[${new Array<string>(n).fill(z).join(',')}]${post}${JSON.stringify(echo + inlineOutputText(id.offset, id.reasoning, n, finish))}}`),
  };
}

function generate(stream: boolean) {
  return (ctx: WireContext, input: RouteInput, id: GenIdentity): GenPlan | HttpReply => {
    const model = input.params[0] ?? '';
    if (!MODELS.has(model)) return tritonError(400, `Request for unknown model: '${model}' is not found`);
    const o = asObj(input.body);
    const text = str(o, 'text_input');
    const max = int(o, 'max_tokens');
    if (!o || text === undefined || max === undefined) {
      return tritonError(400, `[request id: <id_unknown>] expected ${max === undefined ? 'input max_tokens' : 'input text_input'} for model '${model}'`);
    }
    const pc = countPrompt(text);
    if (!pc.ok) return tritonError(400, pc.message);
    const len = resolveMax(ctx.maxModelLen, pc.tokens, max, 16);
    if (!len.ok) return tritonError(400, tritonLengthMessage(pc.tokens, max ?? len.maxTokens, ctx.maxModelLen));
    const minLen = int(o, 'min_length') ?? int(o, 'min_tokens');
    const ignoreEos = int(o, 'end_id') === -1 || (minLen !== undefined && minLen >= len.maxTokens);
    const rid = typeof o['id'] === 'string' ? o['id'] : undefined;
    const echo = !stream && bool(o, 'exclude_input_in_output') !== true ? text : '';
    // "stream" needs a decoupled model; the generate_stream route with stream:false still answers with one event
    const streaming = stream;
    return {
      promptTokens: pc.tokens,
      maxTokens: len.maxTokens,
      ignoreEos,
      minTokens: minLen !== undefined && minLen > 0 ? Math.min(minLen, len.maxTokens) : undefined,
      stream: streaming,
      encoder: encoder(model, rid, id, echo),
    };
  };
}

function metadata(model: string): string {
  return JSON.stringify({
    name: model,
    versions: ['1'],
    platform: model === 'ensemble' ? 'ensemble' : 'python',
    inputs: [
      { name: 'text_input', datatype: 'BYTES', shape: [-1, 1] },
      { name: 'max_tokens', datatype: 'INT32', shape: [-1, 1] },
      { name: 'stream', datatype: 'BOOL', shape: [-1, 1] },
      { name: 'min_length', datatype: 'INT32', shape: [-1, 1] },
      { name: 'end_id', datatype: 'INT32', shape: [-1, 1] },
    ],
    outputs: [
      { name: 'text_output', datatype: 'BYTES', shape: [-1, -1] },
      { name: 'output_log_probs', datatype: 'FP32', shape: [-1, -1] },
    ],
  });
}

const M = '([^/]+)(?:/versions/[^/]+)?';
const routes: Route[] = [
  { method: 'POST', path: new RegExp(`^/v2/models/${M}/generate$`), kind: 'generate', handle: generate(false) },
  { method: 'POST', path: new RegExp(`^/v2/models/${M}/generate_stream$`), kind: 'generate', handle: generate(true) },
  {
    method: 'GET',
    path: '/v2',
    kind: 'static',
    handle: () =>
      json(200, JSON.stringify({ name: 'triton', version: TRITON_VERSION, extensions: ['classification', 'sequence', 'model_repository', 'model_repository(unload_dependents)', 'schedule_policy', 'model_configuration', 'system_shared_memory', 'cuda_shared_memory', 'binary_tensor_data', 'parameters', 'statistics', 'trace', 'logging'] })),
  },
  { method: 'GET', path: '/v2/health/ready', kind: 'static', handle: () => empty(200) },
  { method: 'GET', path: '/v2/health/live', kind: 'static', handle: () => empty(200) },
  { method: 'GET', path: new RegExp(`^/v2/models/${M}/ready$`), kind: 'static', handle: (_c, i) => (MODELS.has(i.params[0] ?? '') ? empty(200) : empty(400)) },
  {
    method: 'GET',
    path: new RegExp(`^/v2/models/${M}$`),
    kind: 'static',
    handle: (_c, i) => (MODELS.has(i.params[0] ?? '') ? json(200, metadata(i.params[0] ?? '')) : tritonError(400, `Request for unknown model: '${i.params[0] ?? ''}' is not found`)),
  },
  {
    method: 'POST',
    path: '/v2/repository/index',
    kind: 'static',
    handle: () => json(200, JSON.stringify([...MODELS, 'tensorrt_llm', 'preprocessing', 'postprocessing'].map((name) => ({ name, version: '1', state: 'READY' })))),
  },
];

function metrics(ctx: WireContext, s: Parameters<EngineWire['metrics']>[1]): string {
  const ens = { model: 'ensemble', version: '1' };
  const trt = { model: 'tensorrt_llm', version: '1' };
  const lines: MetricLine[] = [
    { name: 'nv_inference_request_success', type: 'counter', help: 'Number of successful inference requests, all batch sizes', value: s.requestsFinishedTotal, labels: ens },
    { name: 'nv_inference_request_failure', type: 'counter', help: 'Number of failed inference requests, all batch sizes', value: s.requestsFailedTotal, labels: ens },
    { name: 'nv_inference_count', type: 'counter', help: 'Number of inferences performed (does not include cached requests)', value: s.requestsTotal, labels: ens },
    { name: 'nv_trt_llm_request_metrics', type: 'gauge', help: 'TRT LLM request metrics', value: s.running, labels: { ...trt, request_type: 'active' } },
    { name: 'nv_trt_llm_request_metrics', type: 'gauge', help: 'TRT LLM request metrics', value: s.running, labels: { ...trt, request_type: 'scheduled' } },
    { name: 'nv_trt_llm_request_metrics', type: 'gauge', help: 'TRT LLM request metrics', value: s.waiting, labels: { ...trt, request_type: 'waiting' } },
    { name: 'nv_trt_llm_kv_cache_block_metrics', type: 'gauge', help: 'TRT LLM KV cache block metrics', value: s.kvBlocksTotal, labels: { ...trt, kv_cache_block_type: 'max' } },
    { name: 'nv_trt_llm_kv_cache_block_metrics', type: 'gauge', help: 'TRT LLM KV cache block metrics', value: Math.round(s.kvCacheUsage * s.kvBlocksTotal), labels: { ...trt, kv_cache_block_type: 'used' } },
    { name: 'nv_trt_llm_kv_cache_block_metrics', type: 'gauge', help: 'TRT LLM KV cache block metrics', value: s.kvBlocksTotal - Math.round(s.kvCacheUsage * s.kvBlocksTotal), labels: { ...trt, kv_cache_block_type: 'free' } },
    { name: 'nv_trt_llm_general_metrics', type: 'gauge', help: 'General TRT LLM metrics', value: s.stepsTotal, labels: { ...trt, general_type: 'iteration_counter' } },
    // Triton documents no preemption or token counters: vLLM's names stand in
    ...vllmMetricLines(ctx, s, new Set(['vllm:num_preemptions_total', 'vllm:prompt_tokens_total', 'vllm:generation_tokens_total', 'vllm:kv_cache_usage_perc'])),
  ];
  return renderMetrics(lines);
}

export const tritonWire: EngineWire = {
  kind: 'triton',
  version: TRITON_VERSION,
  routes,
  commonHeaders: {},
  notFound: () => tritonError(404, 'Not Found'),
  badJson: (_p, message) => tritonError(400, `failed to parse the request JSON buffer: ${message}`),
  errorReply: (status, message) => tritonError(status, message),
  metrics,
};
