import { describe, expect, it } from 'vitest';
import { dialects, isEmbeddingsApi } from '../src/dialects/index.js';
import { WHOLE_PARSE_LIMIT } from '../src/dialects/openai-embeddings.js';
import type { GenerationRequest } from '../src/dialects/types.js';

const req = (inputs: string[], extra: Partial<GenerationRequest> = {}): GenerationRequest => ({
  model: 'emb',
  prompt: inputs[0] ?? '',
  inputs,
  maxTokens: 0,
  forceLength: false,
  stream: false,
  ...extra,
});

/** A vector's JSON of `dims` floats. */
const vec = (dims: number): string => `[${Array.from({ length: dims }, (_, i) => (((i * 37) % 200) / 1000 - 0.1).toFixed(4)).join(',')}]`;

describe('openai-embeddings dialect', () => {
  const d = dialects['openai-embeddings'];

  it('POSTs every input as a list with float encoding, model and --extra-body merged, whole-body framing', () => {
    const p = d.buildRequest(req(['a b', 'c d e'], { extraBody: { dimensions: 256 } }));
    expect(p).toMatchObject({ method: 'POST', path: '/v1/embeddings', framing: 'json' });
    expect(JSON.parse(p.body)).toEqual({ model: 'emb', input: ['a b', 'c d e'], encoding_format: 'float', dimensions: 256 });
    // No inputs: the prompt alone; an empty model is left out.
    expect(JSON.parse(d.buildRequest({ ...req([]), inputs: undefined, prompt: 'x', model: '' }).body)).toEqual({ input: ['x'], encoding_format: 'float' });
  });

  it('reads usage and checks one vector per input, parsed whole or scanned when large', () => {
    const small = `{"object":"list","data":[{"index":0,"object":"embedding","embedding":${vec(4)}},{"index":1,"object":"embedding","embedding":${vec(4)}}],"usage":{"prompt_tokens":17,"total_tokens":17,"completion_tokens":0,"prompt_tokens_details":null}}`;
    expect(d.createParser(req(['a', 'b'])).frame(small, 'data')).toEqual({ usage: { promptTokens: 17, outputTokens: 0, source: 'server-usage' }, done: true });
    const items = Array.from({ length: 3 }, (_, i) => `{"index":${i},"object":"embedding","embedding":${vec(4096)}}`).join(',');
    const large = `{"id":"embd-1","object":"list","data":[${items}],"usage":{"prompt_tokens":300,"total_tokens":300}}`;
    expect(large.length).toBeGreaterThan(WHOLE_PARSE_LIMIT);
    expect(d.createParser(req(['a', 'b', 'c'])).frame(large, 'data')).toEqual({ usage: { promptTokens: 300, source: 'server-usage' }, done: true });
    // The same body for four inputs is missing one vector: a failed request, either way it is read.
    expect(d.createParser(req(['a', 'b', 'c', 'd'])).frame(large, 'data')?.error?.message).toBe('the server returned 3 embeddings for 4 inputs');
    expect(d.createParser(req(['a', 'b', 'c'])).frame(small, 'data')?.error?.message).toBe('the server returned 2 embeddings for 3 inputs');
  });

  it('an error body or a body that is not an embeddings reply is a failure', () => {
    const p = d.createParser(req(['a']));
    expect(p.frame('{"object":"error","message":"bad input","type":"BadRequestError"}', 'data')?.error?.message).toBe('bad input');
    expect(d.createParser(req(['a'])).frame('{"choices":[]}', 'data')?.error?.type).toBe('parse');
    expect(d.createParser(req(['a'])).frame('not json', 'data')?.error?.type).toBe('parse');
  });
});

describe('tei-embeddings dialect', () => {
  const d = dialects['tei-embeddings'];

  it('POSTs {inputs} to /embed with no model, and reads TEI\'s x-compute-tokens header as the server count', () => {
    const p = d.buildRequest(req(['a', 'b'], { extraBody: { truncate: true } }));
    expect(p).toMatchObject({ method: 'POST', path: '/embed', framing: 'json' });
    expect(JSON.parse(p.body)).toEqual({ inputs: ['a', 'b'], truncate: true });
    const headers: Record<string, string> = { 'x-compute-tokens': '42' };
    expect(d.usageFromHeaders?.((n) => headers[n])).toEqual({ promptTokens: 42, source: 'server-details' });
    expect(d.usageFromHeaders?.(() => undefined)).toBeUndefined();
    expect(d.usageFromHeaders?.(() => 'many')).toBeUndefined();
  });

  it('counts the vectors of the bare array, whole or scanned; TEI errors are failures', () => {
    expect(d.createParser(req(['a', 'b'])).frame(`[${vec(4)},${vec(4)}]`, 'data')).toEqual({ done: true });
    const large = `[${Array.from({ length: 5 }, () => vec(2048)).join(',')}]`;
    expect(large.length).toBeGreaterThan(WHOLE_PARSE_LIMIT);
    expect(d.createParser(req(['a', 'b', 'c', 'd', 'e'])).frame(large, 'data')).toEqual({ done: true });
    expect(d.createParser(req(['a', 'b'])).frame(large, 'data')?.error?.message).toBe('the server returned 5 embeddings for 2 inputs');
    expect(d.createParser(req(['a'])).frame('{"error":"Batch size error","error_type":"validation"}', 'data')?.error).toEqual({ message: 'Batch size error', type: 'validation' });
    expect(d.errorMessage(413, '{"error":"batch size 64 > maximum allowed batch size 32","error_type":"validation"}')).toBe('batch size 64 > maximum allowed batch size 32');
  });

  it('only the embeddings APIs say so: auto-detection never picks them', () => {
    expect(Object.keys(dialects).filter(isEmbeddingsApi).sort()).toEqual(['openai-embeddings', 'tei-embeddings']);
  });
});
