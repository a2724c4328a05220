/** Ollama's OpenAI chat shim (wire-formats.md §8.6). */
import { outputText, tokenOut } from './filler.js';
import { goString } from './json.js';
import { SSE_DONE, readOpenAi, sse } from './openai-common.js';
import { resolveMax } from './request.js';
import { json, type FinishReason, type GenEncoder, type GenIdentity, type GenPlan, type HttpReply, type WireContext } from './types.js';

function oaiError(status: number, message: string, type: string): HttpReply {
  return json(status, JSON.stringify({ error: { message, type, param: null, code: null } }));
}

function encoder(id: GenIdentity, model: string, p: number, includeUsage: boolean): GenEncoder {
  // id = chatcmpl- + a random integer below 1000
  const head = `{"id":"chatcmpl-${id.seq % 1000}","object":"chat.completion.chunk","created":${id.createdSec},"model":${goString(model)},"system_fingerprint":"fp_ollama","choices":`;
  const chunk = (t: string, finish: FinishReason | null): string =>
    sse(`${head}[{"index":0,"delta":{"role":"assistant","content":${goString(t)}},"finish_reason":${finish ? `"${finish === 'stop' ? 'stop' : 'length'}"` : 'null'}}]}`);
  const tail = (n: number, finish: FinishReason): string =>
    chunk('', finish) + (includeUsage ? sse(`${head}[],"usage":{"prompt_tokens":${p},"completion_tokens":${n},"total_tokens":${p + n}}}`) : '') + SSE_DONE;
  return {
    delimiter: '\n\n',
    streamHeaders: () => ({ 'content-type': 'text/event-stream' }),
    token: (i, finish) => (finish === 'stop' ? '' : chunk(tokenOut(id.offset, i, finish), null)) + (finish ? tail(i + 1, finish) : ''),
    tail: (n, finish) => tail(n, finish),
    body: (n, finish) =>
      json(
        200,
        `{"id":"chatcmpl-${id.seq % 1000}","object":"chat.completion","created":${id.createdSec},"model":${goString(model)},"system_fingerprint":"fp_ollama","choices":[{"index":0,"message":{"role":"assistant","content":${goString(outputText(id.offset, n, finish))}},"finish_reason":"${finish === 'stop' ? 'stop' : 'length'}"}],"usage":{"prompt_tokens":${p},"completion_tokens":${n},"total_tokens":${p + n}}}`,
      ),
  };
}

export function ollamaOpenAiChat(ctx: WireContext, input: { body: unknown }, id: GenIdentity): GenPlan | HttpReply {
  const r = readOpenAi(input.body, true);
  if (typeof r === 'string') return oaiError(400, r, 'invalid_request_error');
  const known = r.model !== undefined && (r.model === ctx.model || r.model === (ctx.model.includes(':') ? ctx.model : `${ctx.model}:latest`));
  if (!known) return oaiError(404, `model "${r.model ?? ''}" not found, try pulling it first`, 'not_found_error');
  if (!r.prompt.ok) return oaiError(400, r.prompt.message, 'invalid_request_error');
  const len = resolveMax(ctx.maxModelLen, Math.min(r.prompt.tokens, ctx.maxModelLen - 1), r.requestedMax, 'remaining', true);
  if (!len.ok) return oaiError(400, 'max_tokens must be positive', 'invalid_request_error');
  return { promptTokens: Math.min(r.prompt.tokens, ctx.maxModelLen - 1), maxTokens: len.maxTokens, ignoreEos: false, stream: r.stream, encoder: encoder(id, r.model ?? ctx.model, r.prompt.tokens, r.includeUsage === true) };
}
