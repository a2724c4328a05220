import { htmlText, looksLikeHtml } from '../core/short-error.js';
import type { FrameEvent, GenerationRequest, HttpRequestPlan, UsageInfo } from './types.js';

export type Json = Record<string, unknown>;

/** Marker returned by parseObject when the payload is not a JSON object. */
export const NOT_JSON: unique symbol = Symbol('not-json');

export function parseObject(payload: string): Json | unknown[] | typeof NOT_JSON {
  try {
    const v: unknown = JSON.parse(payload);
    if (typeof v === 'object' && v !== null) return v as Json | unknown[];
    return NOT_JSON;
  } catch {
    return NOT_JSON;
  }
}

export function parseErrorEvent(payload: string): FrameEvent {
  // A web page where an API reply was expected (a file server, a proxy's error page): say so, by its title.
  if (looksLikeHtml(payload)) return { error: { message: `the reply is an HTML page, not an API response: ${oneLine(htmlText(payload), 150)}`, type: 'parse' } };
  return { error: { message: `unparsable frame: ${oneLine(payload, 200)}`, type: 'parse' } };
}

export function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** A non-negative integer count, or undefined. */
export function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
}

export function oneLine(text: string, max = 300): string {
  const s = text.replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** Engines disagree on finish words; map them onto OpenAI's `stop` / `length`, keep the rest as sent. */
export function normFinish(v: unknown): string | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
  switch (v) {
    case 'eos_token':
    case 'stop_sequence':
    case 'eos':
    case 'word':
      return 'stop';
    case 'limit':
      return 'length';
    default:
      return v;
  }
}

/** OpenAI-style `usage` (also vLLM, SGLang, lmdeploy, llama.cpp, TGI, Ollama shim). Null → undefined. */
export function openAiUsage(u: unknown): UsageInfo | undefined {
  if (!isObj(u)) return undefined;
  const usage: UsageInfo = { source: 'server-usage' };
  const p = count(u['prompt_tokens']);
  const c = count(u['completion_tokens']);
  if (p !== undefined) usage.promptTokens = p;
  if (c !== undefined) usage.outputTokens = c;
  const details = u['prompt_tokens_details'];
  const cached = isObj(details) ? count(details['cached_tokens']) : undefined;
  if (cached !== undefined) usage.cachedTokens = cached;
  return p === undefined && c === undefined ? undefined : usage;
}

/**
 * An error object inside a 200 stream or an error body: `{error:{message,type}}` (OpenAI, vLLM ≥0.10.1,
 * llama.cpp, SGLang native), `{error:"..", error_type}` (TGI, Ollama, Triton), flat `{object:"error",message}`
 * (vLLM ≤0.10.0, SGLang/lmdeploy OpenAI routes), FastAPI `{detail}`.
 */
export function errorOf(o: Json): { message: string; type?: string } | undefined {
  const e = o['error'];
  if (isObj(e)) {
    const inner = isObj(e['error']) ? e['error'] : e;
    const message = str(inner['message']) ?? oneLine(JSON.stringify(inner));
    const type = str(inner['type']) ?? codeType(inner['code']) ?? codeType(inner['http_status_code']);
    return type === undefined ? { message } : { message, type };
  }
  if (typeof e === 'string') {
    const type = str(o['error_type']);
    return type === undefined ? { message: e } : { message: e, type };
  }
  if (o['object'] === 'error') {
    const message = str(o['message']) ?? 'error';
    const type = str(o['type']);
    return type === undefined ? { message } : { message, type };
  }
  return undefined;
}

function codeType(v: unknown): string | undefined {
  return typeof v === 'number' || typeof v === 'string' ? String(v) : undefined;
}

/**
 * Shared `errorMessage`: the documented message if the body is one of the known shapes, the visible text
 * of an HTML page (title first), else the body — always one line.
 */
export function errorMessage(status: number, body: string): string {
  const trimmed = body.trim();
  if (trimmed === '') return `HTTP ${status} with an empty body`;
  if (trimmed.startsWith('<') && looksLikeHtml(trimmed)) return oneLine(htmlText(trimmed));
  const v = parseObject(trimmed);
  const o = Array.isArray(v) ? v[0] : v;
  if (isObj(o)) {
    const e = errorOf(o);
    if (e !== undefined) return oneLine(e.message);
    const detail = o['detail'];
    if (typeof detail === 'string') return oneLine(detail);
    if (Array.isArray(detail) && isObj(detail[0])) {
      const d = detail[0];
      const loc = Array.isArray(d['loc']) ? `${d['loc'].join('.')}: ` : '';
      return oneLine(`${loc}${str(d['msg']) ?? JSON.stringify(d)}`);
    }
    const message = str(o['message']);
    if (message !== undefined) return oneLine(message);
  }
  return oneLine(trimmed);
}

/**
 * `extraBody` merged last: object values merge one level deep into an existing object (so
 * `{"sampling_params":{"top_k":1}}` adds to the dialect's own), anything else replaces, and `null`
 * removes the field (to drop something a server rejects, e.g. `{"min_tokens":null}`).
 */
export function mergeExtra(body: Json, extra: Record<string, unknown> | undefined): Json {
  if (extra === undefined) return body;
  for (const [k, v] of Object.entries(extra)) {
    const cur = body[k];
    if (v === null) delete body[k];
    else if (isObj(v) && isObj(cur)) body[k] = dropNulls({ ...cur, ...v });
    else body[k] = v;
  }
  return body;
}

function dropNulls(o: Json): Json {
  for (const [k, v] of Object.entries(o)) if (v === null) delete o[k];
  return o;
}

export function jsonHeaders(stream: boolean): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
  };
}

/** The common plan: a JSON POST answered by an SSE stream, or by one JSON body when not streaming. */
export function sseOrJsonPost(path: string, body: unknown, stream: boolean): HttpRequestPlan {
  return { method: 'POST', path, headers: jsonHeaders(stream), body: JSON.stringify(body), framing: stream ? 'sse' : 'json' };
}

export function userMessages(req: GenerationRequest): { role: string; content: string }[] {
  return req.messages ?? [{ role: 'user', content: req.prompt }];
}

/**
 * New text of a cumulative format. Falls back to the common prefix when the server rewrote the tail
 * (detokenisers may replace a held-back partial character), which is the best a delta consumer can do.
 */
export function suffixAfter(prev: string, next: string): string {
  if (next.startsWith(prev)) return next.slice(prev.length);
  let i = 0;
  const n = Math.min(prev.length, next.length);
  while (i < n && prev.charCodeAt(i) === next.charCodeAt(i)) i++;
  return next.slice(i);
}

/** A payload from the SSE `error:` field (older llama.cpp): `{"code":500,"message":"..","type":".."}`. */
export function errorFieldEvent(payload: string): FrameEvent {
  const v = parseObject(payload);
  if (isObj(v)) {
    const e = errorOf(v);
    if (e !== undefined) return { error: e };
    const message = str(v['message']);
    const type = str(v['type']);
    if (message !== undefined) return { error: type === undefined ? { message } : { message, type } };
  }
  return { error: { message: oneLine(payload) || 'error event' } };
}
