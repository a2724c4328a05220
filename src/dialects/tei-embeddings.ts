import { NOT_JSON, errorMessage, errorOf, isObj, jsonHeaders, mergeExtra, parseErrorEvent, parseObject } from './_shared.js';
import { WHOLE_PARSE_LIMIT, embeddingInputs, vectorCountError } from './openai-embeddings.js';
import type { Dialect, FrameEvent, GenerationRequest, HttpRequestPlan, StreamParser, UsageInfo } from './types.js';

/**
 * Reads a TEI /embed reply: a bare array with one array of floats per input. The body has no token count; TEI
 * says it in the `x-compute-tokens` header (usageFromHeaders), and without one the client's count stands.
 */
class TeiEmbeddingsParser implements StreamParser {
  private readonly expected: number;

  constructor(req?: GenerationRequest) {
    this.expected = req ? embeddingInputs(req).length : 1;
  }

  frame(payload: string): FrameEvent | null {
    const text = payload.trimStart();
    // Large bodies: numbers hold no brackets, so the vectors are the opening brackets after the outer one.
    if (payload.length > WHOLE_PARSE_LIMIT && text.startsWith('[')) return this.event(countChar(text, 0x5b) - 1);
    const v = parseObject(payload);
    if (v === NOT_JSON) return { ...parseErrorEvent(payload), done: true };
    if (isObj(v)) {
      const err = errorOf(v);
      return err !== undefined ? { error: err, done: true } : { ...parseErrorEvent(payload), done: true };
    }
    if (!v.every((x) => Array.isArray(x))) return { ...parseErrorEvent(payload), done: true };
    return this.event(v.length);
  }

  private event(vectors: number): FrameEvent {
    return vectors === this.expected ? { done: true } : vectorCountError(vectors, this.expected);
  }
}

function countChar(text: string, code: number): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === code) n++;
  return n;
}

/** Hugging Face text-embeddings-inference: POST /embed `{inputs: [...]}` → `[[...], ...]`, token count in a header. */
export const teiEmbeddings: Dialect = {
  name: 'tei-embeddings',
  canForceLength: false,
  embeddings: true,
  usageFromHeaders(header): UsageInfo | undefined {
    const raw = header('x-compute-tokens');
    const n = raw === undefined ? NaN : Number(raw);
    return Number.isInteger(n) && n >= 0 ? { promptTokens: n, source: 'server-details' } : undefined;
  },
  buildRequest(req: GenerationRequest): HttpRequestPlan {
    // TEI serves one model and takes no model name.
    const body = mergeExtra({ inputs: embeddingInputs(req) }, req.extraBody);
    return { method: 'POST', path: '/embed', headers: jsonHeaders(false), body: JSON.stringify(body), framing: 'json' };
  },
  createParser(req?: GenerationRequest): StreamParser {
    return new TeiEmbeddingsParser(req);
  },
  errorMessage,
};
