/**
 * vLLM legacy demo server (`vllm.entrypoints.api_server`), v0.6.3 and earlier (wire-formats.md §2):
 * POST /generate; streamed objects are Python json.dumps({"text": [prompt + output]}) (", " / ": "
 * separators, \uXXXX escapes), cumulative and prompt-prefixed, each followed by one NUL byte, with no
 * Content-Type header, no finish reason, no counts and no terminator. Non-stream is compact JSON.
 * Errors are Starlette's plain-text 500; unknown routes {"detail":"Not Found"}.
 */
import { countPrompt, inlineOutputText, inlineTokenOut } from './filler.js';
import { pyString } from './json.js';
import { renderMetrics, vllmMetricLines } from './metrics.js';
import { asObj, bool, int, resolveMax } from './request.js';
import { empty, json, text, type EngineWire, type GenEncoder, type GenIdentity, type GenPlan, type HttpReply, type Route, type WireContext } from './types.js';

export const VLLM_LEGACY_VERSION = '0.6.3';

function serverError(status = 500): HttpReply {
  const phrase: Record<number, string> = { 429: 'Too Many Requests', 500: 'Internal Server Error', 503: 'Service Unavailable' };
  return text(status, phrase[status] ?? 'Internal Server Error');
}

function encoder(id: GenIdentity, prompt: string): GenEncoder {
  // cumulative text grows each token: keep the escaped prefix and append escaped words
  let escaped = pyString(prompt).slice(0, -1);
  let have = 0;
  const upTo = (n: number): string => {
    for (; have < n; have++) escaped += pyString(inlineTokenOut(id.offset, id.reasoning, have, null)).slice(1, -1);
    return escaped;
  };
  const frame = (n: number): string => '{"text": [' + upTo(n) + '"]}\0';
  return {
    delimiter: '\0',
    streamHeaders: () => ({}),
    token: (i, finish) => frame(finish === 'stop' ? i : i + 1),
    tail: () => '',
    body: (count, finish) => json(200, JSON.stringify({ text: [prompt + inlineOutputText(id.offset, id.reasoning, count, finish)] })),
  };
}

function generate(ctx: WireContext, input: { body: unknown }, id: GenIdentity): GenPlan | HttpReply {
  const o = asObj(input.body);
  if (!o || o['prompt'] === undefined) return serverError(); // KeyError in the real server
  const pc = countPrompt(o['prompt']);
  if (!pc.ok || typeof o['prompt'] !== 'string') return serverError();
  const max = int(o, 'max_tokens');
  // vLLM 0.2 caps generation at max_model_len (FINISHED_LENGTH_CAPPED) rather than refusing max_tokens; it
  // drops over-long prompts with no output, and a 500 is what a client sees for those and for bad params.
  const len = resolveMax(ctx.maxModelLen, pc.tokens, max, 16, true);
  if (!len.ok) return serverError();
  const minTokens = int(o, 'min_tokens');
  return {
    promptTokens: pc.tokens,
    maxTokens: len.maxTokens,
    ignoreEos: bool(o, 'ignore_eos') === true,
    minTokens: minTokens !== undefined && minTokens > 0 ? minTokens : undefined,
    stream: bool(o, 'stream') === true,
    encoder: encoder(id, o['prompt']),
  };
}

const routes: Route[] = [
  { method: 'POST', path: '/generate', kind: 'generate', handle: generate },
  { method: 'GET', path: '/health', kind: 'static', handle: () => empty(200) },
];

export const vllmLegacyWire: EngineWire = {
  kind: 'vllm-legacy',
  version: VLLM_LEGACY_VERSION,
  routes,
  commonHeaders: { server: 'uvicorn' },
  notFound: () => json(404, '{"detail":"Not Found"}'),
  badJson: () => serverError(),
  errorReply: (status) => serverError(status),
  // the demo server has no /metrics; the sim serves vLLM's names so scrapers can be tested against it
  metrics: (ctx, s) => renderMetrics(vllmMetricLines(ctx, s)),
};
