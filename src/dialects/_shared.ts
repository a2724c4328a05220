import { htmlText, looksLikeHtml } from '../core/short-error.js';
import type { FrameEvent, GenerationRequest, HttpRequestPlan, TextSlot, UsageInfo } from './types.js';

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
  const out = u['completion_tokens_details'];
  const reasoning = (isObj(out) ? count(out['reasoning_tokens']) : undefined) ?? count(u['reasoning_tokens']);
  // SGLang sends reasoning_tokens: 0 on every reply, reasoning or not: only a positive count says something.
  if (reasoning !== undefined && reasoning > 0) usage.reasoningTokens = reasoning;
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

/**
 * X when `s` is prefix + X + suffix and X is a plain JSON string body (no quote, backslash or control
 * character, so it needs no unescaping); undefined otherwise.
 */
export function textBetween(s: string, prefix: string, suffix: string): string | undefined {
  const end = s.length - suffix.length;
  // slice + === compares with memcmp; startsWith/endsWith go char by char (3× slower in V8 11).
  if (end < prefix.length || s.slice(0, prefix.length) !== prefix || s.slice(end) !== suffix) return undefined;
  for (let i = prefix.length; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c === 34 || c === 92 || c < 32) return undefined;
  }
  return s.slice(prefix.length, end);
}

/**
 * Reads the common streamed chunk without JSON.parse, exactly. Servers send every chunk of a reply in one
 * shape: `<prefix>"<text>"<suffix>` where only the text changes (ids and timestamps are fixed per reply).
 * After a chunk was parsed in full and yielded nothing but a text found at the one `"<key>":"` in it, the
 * parts around that text become the template. A later payload that is the same prefix and suffix around a
 * string with no quote, backslash or control character is the same JSON document with another text, so
 * the full parse would give the same event with that text: it is returned without parsing. Anything else
 * (escapes, usage, a finish, another shape) goes through the full parse, which may set a new template.
 */
export class ChunkTemplate {
  private prefix = '';
  private suffix = '';
  private armed = false;

  /** `keys`: where the text may sit, e.g. `"text":"` (completions) and `"content":"` (chat deltas). */
  constructor(private readonly keys: readonly string[]) {}

  /** The text of a payload in the template's shape, or undefined when it must be parsed in full. */
  match(payload: string): string | undefined {
    return this.armed ? textBetween(payload, this.prefix, this.suffix) : undefined;
  }

  /** The template (see StreamParser.textSlot), when one is set. */
  slot(): TextSlot | undefined {
    return this.armed ? { prefix: this.prefix, suffix: this.suffix } : undefined;
  }

  /** After a full parse whose only outcome was `text`: keep the payload's shape when the text is plainly in it. */
  learn(payload: string, text: string): boolean {
    this.armed = false;
    for (const key of this.keys) if (this.learnAt(payload, text, key)) return true;
    return false;
  }

  private learnAt(payload: string, text: string, key: string): boolean {
    const at = payload.indexOf(key);
    if (at === -1 || payload.indexOf(key, at + 1) !== -1) return false;
    const start = at + key.length;
    const close = payload.indexOf('"', start);
    // Equal raw and parsed text: no escape in it (an escape always changes the text), so this is the slot.
    if (close === -1 || payload.slice(start, close) !== text) return false;
    this.prefix = payload.slice(0, start);
    this.suffix = payload.slice(close);
    this.armed = true;
    return true;
  }
}
