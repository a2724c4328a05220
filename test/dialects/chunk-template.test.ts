import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChunkTemplate } from '../../src/dialects/_shared.js';
import { dialects } from '../../src/dialects/index.js';
import type { ApiName, FrameEvent } from '../../src/dialects/types.js';
import { request } from './_run.js';

/** What a parser that never saw an earlier payload says: a full JSON parse every time. */
function freshEvents(api: ApiName, payloads: string[]): (FrameEvent | null)[] {
  return payloads.map((p) => dialects[api].createParser(request()).frame(p, 'data'));
}

function streamEvents(api: ApiName, payloads: string[]): (FrameEvent | null)[] {
  const parser = dialects[api].createParser(request());
  return payloads.map((p) => parser.frame(p, 'data'));
}

/** Deterministic texts that exercise every escape JSON has, raw Unicode and the template's edge cases. */
function texts(seed: number, n: number): string[] {
  const alphabet = [' the', 'a', ',', '"', '\\', '\n', '\t', '\u0001', '/', 'é', '日本', '😀', '', ' "quoted"', '\\"', 'text":"', '\u2028', '}]'];
  let s = seed;
  return Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const a = alphabet[s % alphabet.length] as string;
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % 3 === 0 ? a + (alphabet[s % alphabet.length] as string) : a;
  });
}

const completion = (id: string, text: string, extra = ''): string =>
  `{"id":"${id}","object":"text_completion","created":1761553358,"model":"m","choices":[{"index":0,"text":${JSON.stringify(text)},"logprobs":null,"finish_reason":null,"stop_reason":null}]${extra}}`;
const chat = (text: string, reasoning: string | null = null): string =>
  `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"reasoning_content":${JSON.stringify(reasoning)},"content":${JSON.stringify(text)}},"finish_reason":null}],"usage":null}`;

describe('ChunkTemplate: payloads read without JSON.parse give exactly what a full parse gives', () => {
  afterEach(() => vi.restoreAllMocks());

  it('random texts with every escape, in completions and chat chunks, with shape changes mid-stream', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const t = texts(seed, 60);
      const payloads = [
        ...t.slice(0, 20).map((x) => completion('cmpl-1', x)),
        completion('cmpl-2', 'other id'),
        ...t.slice(20, 30).map((x) => completion('cmpl-2', x, ',"usage":null')),
        completion('cmpl-2', 'done', ',"usage":{"prompt_tokens":3,"completion_tokens":31,"total_tokens":34}'),
        ...t.slice(30, 45).map((x) => chat(x)),
        ...t.slice(45, 52).map((x) => chat(x, x === '' ? 'thinking' : '')),
        ...t.slice(52).map((x) => chat(x)),
        '{"choices":[{"index":0,"text":"a","finish_reason":"length"}]}',
        '[DONE]',
      ];
      for (const api of ['openai-completions', 'openai-chat'] as const) {
        expect(streamEvents(api, payloads), `seed ${seed} ${api}`).toEqual(freshEvents(api, payloads));
      }
    }
  });

  it('shapes that look alike but differ: spaces, two text keys, nested "text", finish and error chunks after plain ones', () => {
    const payloads = [
      completion('x', 'one'),
      completion('x', 'two'),
      '{"id":"x","object":"text_completion","created":1761553358,"model":"m","choices":[{"index":0,"text": "spaced","logprobs":null,"finish_reason":null,"stop_reason":null}]}',
      completion('x', 'three'),
      '{"id":"x","choices":[{"index":0,"text":"a","logprobs":{"text":"a"}},{"index":1,"text":"b"}]}',
      '{"id":"x","choices":[{"index":0,"text":"c","logprobs":{"text":"c"}},{"index":1,"text":"d"}]}',
      completion('x', 'four'),
      completion('x', 'four').replace('"finish_reason":null', '"finish_reason":"abort"'),
      completion('x', 'five'),
      completion('x', 'six').replace('"object":"text_completion"', '"object":"error"'),
      completion('x', 'seven'),
      completion('x', 'eight').slice(0, -1),
      completion('x', 'nine') + ' ',
      completion('x', 'ten'),
      completion('x', 'ten').replace('"model":"m"', '"model":"m","error":{"message":"boom"}'),
    ];
    for (const api of ['openai-completions', 'openai-chat'] as const) {
      expect(streamEvents(api, payloads)).toEqual(freshEvents(api, payloads));
    }
  });

  it('a plain stream is parsed once: every later chunk is read by the template', () => {
    const payloads = Array.from({ length: 64 }, (_, i) => completion('cmpl-7', ` w${i}`));
    const parse = vi.spyOn(JSON, 'parse');
    const events = streamEvents('openai-completions', payloads);
    expect(parse).toHaveBeenCalledTimes(1);
    expect(events.map((e) => e?.text).join('')).toBe(payloads.map((_, i) => ` w${i}`).join(''));
  });

  it('arms only where the parsed text sits plainly at the one key', () => {
    const t = new ChunkTemplate(['"text":"']);
    expect(t.learn('{"text":"a\\nb"}', 'a\nb')).toBe(false);
    expect(t.learn('{"text":"a","x":{"text":"a"}}', 'a')).toBe(false);
    expect(t.learn('{"text":"a"}', 'b')).toBe(false);
    expect(t.learn('{"text":"a","n":1}', 'a')).toBe(true);
    expect(t.match('{"text":"zz","n":1}')).toBe('zz');
    expect(t.match('{"text":"","n":1}')).toBe('');
    expect(t.match('{"text":"z\\"","n":1}')).toBeUndefined();
    expect(t.match('{"text":"z\u0007","n":1}')).toBeUndefined();
    expect(t.match('{"text":"zz","n":2}')).toBeUndefined();
    expect(t.slot()).toEqual({ prefix: '{"text":"', suffix: '","n":1}' });
  });
});
