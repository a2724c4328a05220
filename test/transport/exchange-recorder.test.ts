import { describe, expect, it } from 'vitest';
import { dialects } from '../../src/dialects/index.js';
import type { ApiName, GenerationRequest } from '../../src/dialects/types.js';
import type { Exchange } from '../../src/transport/exchange.js';
import { ExchangeRecorder } from '../../src/transport/exchange-recorder.js';
import { fixture, request } from '../dialects/_run.js';
import { pieces, split } from '../dialects/_split.js';

interface Seen {
  text: string;
  contentFrames: number;
  usage: unknown;
  finishReason: string | undefined;
  done: boolean;
  error: string | undefined;
}

/**
 * The reference: the test splitter and, for the OpenAI dialects (the ones with a text template), one parse per
 * payload by a parser that never saw another payload; the others keep state across payloads (cumulative text).
 */
function reference(api: ApiName, req: GenerationRequest, bytes: Uint8Array): Seen {
  const dialect = dialects[api];
  const stateful = dialect.createParser(req);
  const seen: Seen = { text: '', contentFrames: 0, usage: undefined, finishReason: undefined, done: false, error: undefined };
  for (const { payload, field } of split(dialect.buildRequest(req).framing, [bytes])) {
    // A fresh parser per payload never uses a template; the stateful one is asked too, for end().
    const fresh = api === 'openai-chat' || api === 'openai-completions';
    const ev = fresh ? dialect.createParser(req).frame(payload, field) : stateful.frame(payload, field);
    if (fresh) stateful.frame(payload, field);
    if (!ev) continue;
    if ((ev.text ?? '') !== '' || (ev.tokens ?? 0) > 0) seen.contentFrames++;
    seen.text += ev.text ?? '';
    if (ev.usage) seen.usage = { ...(seen.usage as object), ...ev.usage };
    if (ev.finishReason) seen.finishReason = ev.finishReason;
    if (ev.error && seen.error === undefined) seen.error = ev.error.message;
    if (ev.done) seen.done = true;
  }
  if (stateful.end?.()?.done) seen.done = true;
  if (!seen.done && seen.error === undefined) seen.error = 'stream ended without its final event';
  return seen;
}

/** The transport's way: each chunk handed over as a range of a larger buffer, as the HTTP clients do. */
function recorded(api: ApiName, req: GenerationRequest, chunks: Uint8Array[]): Seen {
  const dialect = dialects[api];
  let ex: Exchange | undefined;
  const rec = new ExchangeRecorder(dialect.buildRequest(req), dialect, req, undefined, (e) => (ex = e));
  rec.started(0);
  rec.head(1, 200, () => undefined);
  chunks.forEach((c, i) => {
    const buf = Buffer.alloc(c.length + 20, 0xff);
    buf.set(c, 7);
    rec.data(2 + i, buf, 7, 7 + c.length);
  });
  rec.end(1e6);
  const e = ex as Exchange;
  return {
    text: e.textParts.join(''),
    contentFrames: e.contentTimesMs.length,
    usage: e.usage,
    finishReason: e.finishReason,
    done: e.done,
    error: e.error?.message,
  };
}

function chunkings(bytes: Uint8Array): Uint8Array[][] {
  const out: Uint8Array[][] = [[bytes]];
  // One read per event, the usual case on a paced stream.
  const text = Buffer.from(bytes);
  const perEvent: Uint8Array[] = [];
  for (let i = 0; i < text.length; ) {
    const at = text.indexOf('\n\n', i);
    const end = at === -1 ? text.length : at + 2;
    perEvent.push(bytes.subarray(i, end));
    i = end;
  }
  out.push(perEvent);
  for (let seed = 1; seed <= 12; seed++) out.push(pieces(bytes, seed, 1 + (seed % 9)));
  return out;
}

const sse = (events: string[]): Uint8Array => new TextEncoder().encode(events.map((e) => `data: ${e}\n\n`).join(''));
const completion = (text: string, finish: string | null = null): string =>
  `{"id":"cmpl-9","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":${JSON.stringify(text)},"logprobs":null,"finish_reason":${JSON.stringify(finish)}}],"usage":null}`;

const synthetic: Record<string, Uint8Array> = {
  'plain tokens, usage, [DONE]': sse([
    ...Array.from({ length: 40 }, (_, i) => completion(` w${i}`)),
    completion('', 'length'),
    '{"id":"cmpl-9","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":40,"total_tokens":43}}',
    '[DONE]',
  ]),
  'multi-byte characters split across reads, escapes, empty texts': sse([
    completion(' héllo'),
    completion(' 日本語'),
    completion(''),
    completion(' 😀 emoji'),
    completion('line\nbreak'),
    completion(' "q"'),
    completion(' plain'),
    completion(' plain2'),
    completion(' end', 'stop'),
    '[DONE]',
  ]),
  'shape change mid-stream and an error event': sse([
    completion(' a'),
    completion(' b'),
    completion(' c').replace('"created":1', '"created":2'),
    completion(' d').replace('"created":1', '"created":2'),
    '{"error":{"message":"boom","type":"server_error"}}',
  ]),
  'truncated after plain tokens': sse([completion(' a'), completion(' b'), completion(' c')]),
  // The fixed part of each chunk holds multi-byte characters: the slot is compared in bytes (slot-bytes.ts).
  'non-ASCII model name around plain, non-ASCII and DEL texts': sse([
    ...[' a', ' b', ' ü', ' c', ' \u007f', ' d', '', ' e'].map((t) => completion(t).replace('"model":"m"', '"model":"mödel-日本"')),
    completion(' f', 'length').replace('"model":"m"', '"model":"mödel-日本"'),
    '[DONE]',
  ]),
};

describe('ExchangeRecorder: decoding, framing and the text-slot shortcut give what a fresh full parse gives', () => {
  for (const [name, bytes] of Object.entries(synthetic)) {
    it(name, () => {
      const want = reference('openai-completions', request({ maxTokens: 64 }), bytes);
      for (const chunks of chunkings(bytes)) expect(recorded('openai-completions', request({ maxTokens: 64 }), chunks)).toEqual(want);
    });
  }

  const streams: [string, ApiName][] = [
    ['vllm-completions-v0.11.sse', 'openai-completions'],
    ['vllm-chat-main.sse', 'openai-chat'],
    ['vllm-midstream-error.sse', 'openai-chat'],
    ['openai-chat-crlf.derived.sse', 'openai-chat'],
    ['sglang-chat.sse', 'openai-chat'],
    ['sglang-completions.sse', 'openai-completions'],
    ['sglang-generate.sse', 'sglang'],
    ['lmdeploy-chat-v0.16.sse', 'openai-chat'],
    ['llamacpp-completion.sse', 'llamacpp'],
    ['llamacpp-completion-error-field.derived.sse', 'llamacpp'],
    ['tgi-generate-stream-v3.3.7.sse', 'tgi'],
    ['tgi-chat-v3.3.7.sse', 'openai-chat'],
    ['triton-generate-stream.sse', 'triton'],
    ['ollama-generate-escapes.derived.ndjson', 'ollama'],
    ['vllm-legacy-v0.2.nul', 'vllm'],
  ];
  for (const [file, api] of streams) {
    it(`recorded stream ${file}`, () => {
      const bytes = fixture(file);
      const want = reference(api, request(), bytes);
      for (const chunks of chunkings(bytes)) expect(recorded(api, request(), chunks)).toEqual(want);
    });
  }

  it('a plain stream is read by its slot after the first chunk (the parser is not asked again)', () => {
    const req = request({ maxTokens: 64 });
    const dialect = dialects['openai-completions'];
    const parser = dialect.createParser(req);
    let calls = 0;
    const counting = { ...dialect, createParser: () => ({ frame: (p: string, f: 'data' | 'error') => (calls++, parser.frame(p, f)), textSlot: () => parser.textSlot?.() }) };
    const rec = new ExchangeRecorder(dialect.buildRequest(req), counting, req, undefined, () => undefined);
    rec.head(0, 200, () => undefined);
    for (let i = 0; i < 30; i++) {
      const b = Buffer.from(`data: ${completion(` t${i}`)}\n\n`);
      rec.data(i, b, 0, b.length);
    }
    // The first chunk is parsed in full and sets the template; every later one is read by the slot.
    expect(calls).toBe(1);
    expect(rec.ex.textParts.join('')).toBe(Array.from({ length: 30 }, (_, i) => ` t${i}`).join(''));
    expect(rec.ex.contentTimesMs).toEqual(Array.from({ length: 30 }, (_, i) => i));
  });
});
