/**
 * Ollama 0.32.15 (wire-formats.md §8): `/` "Ollama is running", NDJSON (application/x-ndjson) from Go
 * encoding/json (compact, `<>&` as \u003c \u003e \u0026), RFC 3339 nanosecond created_at, a final
 * object with done_reason and integer-nanosecond durations (eval_count etc.), stream on by default,
 * only num_predict as a cap (no ignore_eos: unforced natural lengths). `context` ids on non-raw
 * /api/generate. OpenAI chat shim with system_fingerprint fp_ollama and role in every delta.
 */
import { performance } from 'node:perf_hooks';
import { countChat, countPrompt, fillerIds, splitOutput, tokenOut, tokenText } from './filler.js';
import { goString } from './json.js';
import { renderMetrics, vllmMetricLines } from './metrics.js';
import { ollamaOpenAiChat } from './ollama-openai.js';
import { asObj, bool, int, resolveMax, str } from './request.js';
import { json, text, type EngineWire, type FinishReason, type GenEncoder, type GenIdentity, type GenPlan, type GenTimings, type HttpReply, type Route, type WireContext } from './types.js';
import { imageTokensOf } from './vision.js';
import { promptIds } from './vllm.js';

export const OLLAMA_VERSION = '0.32.15';

/** Model names Ollama answers to: `name` and `name:latest`. */
export function ollamaTag(ctx: WireContext): string {
  return ctx.model.includes(':') ? ctx.model : `${ctx.model}:latest`;
}

export function ollamaKnows(ctx: WireContext, model: string): boolean {
  return model === ctx.model || model === ollamaTag(ctx);
}

export function ollamaError(status: number, message: string): HttpReply {
  return json(status, `{"error":${goString(message)}}`, { 'content-type': 'application/json; charset=utf-8' });
}

/** RFC 3339 UTC with nanoseconds, as Go's time.Time marshals it. */
export function rfc3339Nano(perfMs: number): string {
  const epochMs = performance.timeOrigin + perfMs;
  const whole = Math.floor(epochMs);
  const iso = new Date(whole).toISOString(); // 2025-06-01T12:00:00.101Z
  const ns = Math.floor((epochMs - whole) * 1e6)
    .toString()
    .padStart(6, '0');
  return iso.slice(0, -1) + ns + 'Z';
}

function nanos(ms: number): number {
  return Math.max(0, Math.round(ms * 1e6));
}

function encoder(ctx: WireContext, id: GenIdentity, modelName: string, chat: boolean, p: number, context: number[] | undefined): GenEncoder {
  const m = goString(modelName);
  // --reasoning-tokens: Ollama's thinking field (message.thinking on chat, thinking on generate) carries the reasoning phase.
  const piece = (t: string, thinking?: string): string => {
    const th = thinking ? `,"thinking":${goString(thinking)}` : '';
    return chat ? `"message":{"role":"assistant","content":${goString(t)}${th}}` : `"response":${goString(t)}${th}`;
  };
  const tokenPiece = (i: number, finish: FinishReason | null): string =>
    i < (id.reasoning ?? 0) ? piece('', tokenText(id.offset, i)) : piece(tokenOut(id.offset, i, finish));
  const final = (content: string, n: number, finish: FinishReason, t: GenTimings, thinking?: string): string => {
    const pfStart = t.prefillStartMs ?? t.arrivalMs;
    const pfEnd = t.prefillEndMs ?? pfStart;
    const ctxIds = context ? `,"context":[${[...context, ...fillerIds(id.offset, n)].join(',')}]` : '';
    return `{"model":${m},"created_at":"${rfc3339Nano(t.nowMs)}",${piece(content, thinking)},"done":true,"done_reason":"${finish === 'stop' ? 'stop' : 'length'}"${ctxIds},"total_duration":${nanos(t.nowMs - t.arrivalMs)},"load_duration":${nanos(Math.min(1, pfStart - t.arrivalMs))},"prompt_eval_count":${p},"prompt_eval_duration":${nanos(pfEnd - pfStart)},"eval_count":${n},"eval_duration":${nanos(t.nowMs - pfEnd)}}`;
  };
  return {
    delimiter: '\n',
    streamHeaders: () => ({ 'content-type': 'application/x-ndjson' }),
    token: (i, finish, t) =>
      (finish === 'stop' ? '' : `{"model":${m},"created_at":"${rfc3339Nano(t.nowMs)}",${tokenPiece(i, finish)},"done":false}\n`) + (finish ? final('', i + 1, finish, t) + '\n' : ''),
    tail: (n, finish, t) => final('', n, finish, t) + '\n',
    body: (n, finish, t) => {
      const out = splitOutput(id.offset, id.reasoning, n, finish);
      return json(200, final(out.answer, n, finish, t, out.reasoning || undefined), { 'content-type': 'application/json; charset=utf-8' });
    },
  };
}

function native(chat: boolean) {
  return (ctx: WireContext, input: { body: unknown }, id: GenIdentity): GenPlan | HttpReply => {
    const o = asObj(input.body);
    const model = str(o, 'model');
    if (!o || !model) return ollamaError(400, 'model is required');
    if (!ollamaKnows(ctx, model)) return ollamaError(404, `model "${model}" not found, try pulling it first`);
    const raw = bool(o, 'raw') === true;
    const pc = chat ? countChat(o['messages']) : countPrompt(o['prompt'] ?? '', !raw);
    if (!pc.ok) return ollamaError(400, pc.message);
    const opts = asObj(o['options']);
    const numPredict = int(opts, 'num_predict');
    const numCtx = int(opts, 'num_ctx') ?? ctx.maxModelLen;
    const limit = Math.min(numCtx, ctx.maxModelLen);
    // Ollama truncates an over-long prompt to the context instead of failing. /api/generate's own `images` count here
    // (on /api/chat countChat counted the messages' images already).
    const promptTokens = Math.min(pc.tokens + (chat ? 0 : imageTokensOf(o)), limit - 1);
    const len = resolveMax(limit, promptTokens, numPredict === undefined || numPredict < 0 ? undefined : numPredict, 'remaining', true);
    if (!len.ok) return ollamaError(400, 'num_predict must be positive');
    const context = !chat && !raw ? promptIds(promptTokens) : undefined;
    return {
      promptTokens,
      maxTokens: len.maxTokens,
      ignoreEos: false,
      stream: bool(o, 'stream') !== false,
      encoder: encoder(ctx, id, model, chat, promptTokens, context),
    };
  };
}

function tags(ctx: WireContext): string {
  const name = ollamaTag(ctx);
  const q = ctx.quant ? ctx.quant.toUpperCase() : 'Q4_K_M';
  return JSON.stringify({
    models: [
      {
        name,
        model: name,
        modified_at: rfc3339Nano(0),
        size: 4920753328,
        digest: 'a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72',
        details: { parent_model: '', format: 'gguf', family: 'llama', families: ['llama'], parameter_size: '8.0B', quantization_level: q },
      },
    ],
  }).replace(/[<>&]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

function ps(ctx: WireContext): string {
  const name = ollamaTag(ctx);
  return JSON.stringify({
    models: [{ name, model: name, size: 6654289920, digest: 'a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72', details: { parent_model: '', format: 'gguf', family: 'llama', families: ['llama'], parameter_size: '8.0B', quantization_level: 'Q4_K_M' }, expires_at: '2318-01-01T00:00:00Z', size_vram: 6654289920, context_length: ctx.maxModelLen }],
  });
}

const routes: Route[] = [
  { method: 'POST', path: '/api/generate', kind: 'generate', handle: native(false) },
  { method: 'POST', path: '/api/chat', kind: 'generate', handle: native(true) },
  { method: 'POST', path: '/v1/chat/completions', kind: 'generate', handle: ollamaOpenAiChat },
  { method: 'GET', path: '/', kind: 'static', handle: () => text(200, 'Ollama is running') },
  { method: 'HEAD', path: '/', kind: 'static', handle: () => text(200, '') },
  { method: 'GET', path: '/api/version', kind: 'static', handle: () => json(200, JSON.stringify({ version: OLLAMA_VERSION }), { 'content-type': 'application/json; charset=utf-8' }) },
  { method: 'GET', path: '/api/tags', kind: 'static', handle: (ctx) => json(200, tags(ctx), { 'content-type': 'application/json; charset=utf-8' }) },
  { method: 'GET', path: '/api/ps', kind: 'static', handle: (ctx) => json(200, ps(ctx), { 'content-type': 'application/json; charset=utf-8' }) },
  {
    method: 'POST',
    path: '/api/show',
    kind: 'static',
    handle: (ctx, i) => {
      const model = str(asObj(i.body), 'model') ?? str(asObj(i.body), 'name');
      if (!model || !ollamaKnows(ctx, model)) return ollamaError(404, `model '${model ?? ''}' not found`);
      return json(200, JSON.stringify({ modelfile: `FROM ${ollamaTag(ctx)}`, parameters: '', template: '{{ .Prompt }}', details: { format: 'gguf', family: 'llama' }, model_info: { 'general.architecture': 'llama', 'llama.context_length': ctx.maxModelLen }, capabilities: ['completion'] }), { 'content-type': 'application/json; charset=utf-8' });
    },
  },
  {
    method: 'GET',
    path: '/v1/models',
    kind: 'static',
    handle: (ctx) => json(200, JSON.stringify({ object: 'list', data: [{ id: ollamaTag(ctx), object: 'model', created: ctx.startedAtSec, owned_by: 'library' }] })),
  },
];

export const ollamaWire: EngineWire = {
  kind: 'ollama',
  version: OLLAMA_VERSION,
  routes,
  commonHeaders: {},
  notFound: () => text(404, '404 page not found'),
  badJson: (_p, message) => ollamaError(400, message),
  errorReply: (status, message) => ollamaError(status, message),
  // Ollama has no metrics endpoint; the sim serves vLLM's names so scrapers can be tested
  metrics: (ctx, s) => renderMetrics(vllmMetricLines(ctx, s)),
};
