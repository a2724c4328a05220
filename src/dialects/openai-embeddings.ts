import { type Json, NOT_JSON, errorMessage, errorOf, isObj, jsonHeaders, mergeExtra, openAiUsage, parseErrorEvent, parseObject } from './_shared.js';
import type { Dialect, FrameEvent, GenerationRequest, HttpRequestPlan, StreamParser } from './types.js';

/**
 * Bodies up to this size are parsed whole. Larger ones (a batch of 32 vectors of 4096 floats is over 1 MB) are
 * scanned: counting the vectors and reading the small `usage` object costs a fraction of JSON.parse, which would
 * otherwise hold the client's event loop for milliseconds per reply and delay the time stamps of other requests.
 */
export const WHOLE_PARSE_LIMIT = 64 * 1024;

/** The texts one embeddings request carries: `inputs`, else the prompt alone. */
export function embeddingInputs(req: GenerationRequest): string[] {
  return req.inputs ?? [req.prompt];
}

/** POST /v1/embeddings with every input as a list, floats asked for explicitly (the OpenAI default, said anyway). */
function body(req: GenerationRequest): Json {
  const b: Json = {};
  if (req.model !== '') b['model'] = req.model;
  b['input'] = embeddingInputs(req);
  b['encoding_format'] = 'float';
  return mergeExtra(b, req.extraBody);
}

/** One vector per input, or a one-line error saying how many came back. */
export function vectorCountError(got: number, expected: number): FrameEvent {
  return { error: { message: `the server returned ${got} embeddings for ${expected} inputs` }, done: true };
}

/** `{"key": {...}}`: the object after the last occurrence of `"key"`, parsed, or undefined (no braces in strings assumed). */
export function objectAfterKey(text: string, key: string): Json | undefined {
  const at = text.lastIndexOf(`"${key}"`);
  if (at < 0) return undefined;
  const open = text.indexOf('{', at);
  if (open < 0) return undefined;
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b) depth++;
    else if (c === 0x7d && --depth === 0) {
      const v = parseObject(text.slice(open, i + 1));
      return v !== NOT_JSON && isObj(v) ? v : undefined;
    }
  }
  return undefined;
}

/** Reads an OpenAI embeddings reply: `{data: [{embedding, index}], usage: {prompt_tokens, total_tokens}}`. */
export class OpenAiEmbeddingsParser implements StreamParser {
  private readonly expected: number;

  constructor(req?: GenerationRequest) {
    this.expected = req ? embeddingInputs(req).length : 1;
  }

  frame(payload: string): FrameEvent | null {
    const large = payload.length > WHOLE_PARSE_LIMIT && payload.trimStart().startsWith('{') && payload.includes('"data"');
    return large ? this.scan(payload) : this.parse(payload);
  }

  private parse(payload: string): FrameEvent {
    const v = parseObject(payload);
    if (v === NOT_JSON || Array.isArray(v)) return { ...parseErrorEvent(payload), done: true };
    const err = errorOf(v);
    if (err !== undefined) return { error: err, done: true };
    const data = v['data'];
    if (!Array.isArray(data)) return { ...parseErrorEvent(payload), done: true };
    return this.event(data.length, v['usage']);
  }

  /** Large bodies: vectors counted by their `"embedding":` keys (numbers never contain quotes), usage parsed alone. */
  private scan(payload: string): FrameEvent {
    const vectors = payload.match(/"embedding"\s*:/g)?.length ?? 0;
    return this.event(vectors, objectAfterKey(payload, 'usage'));
  }

  private event(vectors: number, usageField: unknown): FrameEvent {
    if (vectors !== this.expected) return vectorCountError(vectors, this.expected);
    const usage = openAiUsage(usageField);
    return usage ? { usage, done: true } : { done: true };
  }
}

/** POST /v1/embeddings: vLLM, SGLang and llama.cpp (with --embeddings) serve it, as does OpenAI. Never streamed. */
export const openaiEmbeddings: Dialect = {
  name: 'openai-embeddings',
  canForceLength: false,
  embeddings: true,
  buildRequest(req: GenerationRequest): HttpRequestPlan {
    return { method: 'POST', path: '/v1/embeddings', headers: jsonHeaders(false), body: JSON.stringify(body(req)), framing: 'json' };
  },
  createParser(req?: GenerationRequest): StreamParser {
    return new OpenAiEmbeddingsParser(req);
  },
  errorMessage,
};
