import { describe, expect, it } from 'vitest';
import { createFramer } from '../../src/transport/framing.js';
import type { Framing } from '../../src/dialects/types.js';

function split(framing: Framing, body: string, piece: number): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const f = createFramer(framing, (p, field) => out.push([field, p]));
  for (let i = 0; i < body.length; i += piece) f.push(body.slice(i, i + piece));
  f.end();
  return out;
}

describe('framing', () => {
  it('splits SSE with and without the space, CRLF, comments and the error field, in any piece size', () => {
    const body = 'data: {"a":1}\n\n:keep-alive\n\ndata:{"b":2}\r\n\r\nerror: {"message":"boom"}\n\ndata: [DONE]\n\n';
    for (const piece of [1, 3, 7, 1000]) {
      expect(split('sse', body, piece)).toEqual([
        ['data', '{"a":1}'],
        ['data', '{"b":2}'],
        ['error', '{"message":"boom"}'],
        ['data', '[DONE]'],
      ]);
    }
  });

  it('drops an SSE event the body ended in the middle of', () => {
    expect(split('sse', 'data: {"a":1}\n\ndata: {"b"', 4)).toEqual([['data', '{"a":1}']]);
  });

  it('splits NDJSON, NUL and picks NUL or LF for vLLM legacy', () => {
    expect(split('ndjson', '{"a":1}\n{"b":2}\n', 2)).toEqual([['data', '{"a":1}'], ['data', '{"b":2}']]);
    expect(split('nul', '{"a":1}\0{"b":2}\0', 5)).toEqual([['data', '{"a":1}'], ['data', '{"b":2}']]);
    expect(split('nul-or-ndjson', '{"t":"a\\nb"}\0{"t":"c"}\0', 3)).toEqual([['data', '{"t":"a\\nb"}'], ['data', '{"t":"c"}']]);
    expect(split('nul-or-ndjson', '{"t":"a"}\n{"t":"c"}\n', 3)).toEqual([['data', '{"t":"a"}'], ['data', '{"t":"c"}']]);
    expect(split('json', '{"x":\n1}', 2)).toEqual([['data', '{"x":\n1}']]);
  });
});
