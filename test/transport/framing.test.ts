import { createParser } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { createFramer } from '../../src/transport/framing.js';

type Payload = [string, 'data' | 'error'];

/** The reference: eventsource-parser itself, fed the whole body at once. */
function reference(body: string): Payload[] {
  const out: Payload[] = [];
  const p = createParser({
    onEvent: (e) => out.push([e.data, 'data']),
    onError: (err) => {
      const e = err as { type?: string; field?: string; value?: string };
      if (e.type === 'unknown-field' && e.field === 'error' && e.value !== undefined) out.push([e.value, 'error']);
    },
  });
  p.feed(body);
  return out;
}

function framed(chunks: string[]): { payloads: Payload[]; fast: number } {
  const payloads: Payload[] = [];
  const framer = createFramer('sse', (payload, field) => payloads.push([payload, field]));
  let fast = 0;
  for (const c of chunks) if (framer.push(c) >= 0) fast++;
  framer.end();
  return { payloads, fast };
}

/** Cut at every event end, then at fixed strides, then at pseudo-random points. */
function chunkings(body: string): string[][] {
  const out: string[][] = [[body]];
  const byEvent = body.split(/(?<=\n\n)/);
  out.push(byEvent);
  for (const stride of [1, 2, 3, 7, 13, 64]) {
    const pieces: string[] = [];
    for (let i = 0; i < body.length; i += stride) pieces.push(body.slice(i, i + stride));
    out.push(pieces);
  }
  let s = 7;
  for (let k = 0; k < 20; k++) {
    const pieces: string[] = [];
    for (let i = 0; i < body.length; ) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      const n = 1 + (s % 40);
      pieces.push(body.slice(i, i + n));
      i += n;
    }
    out.push(pieces);
  }
  return out;
}

const bodies: Record<string, string> = {
  'plain events': 'data: {"a":1}\n\ndata: {"a":2}\n\ndata:{"a":3}\n\ndata: [DONE]\n\n',
  'CRLF and CR line ends': 'data: {"a":1}\r\n\r\ndata: {"a":2}\r\rdata: x\n\n',
  'comments, ids, event names, retry': ': keep-alive\n\nid: 7\nevent: message\ndata: one\n\nretry: 100\ndata: two\n\n: c\ndata: three\n\n',
  'multi-line data': 'data: a\ndata: b\n\ndata: c\n\n',
  'error field (older llama.cpp)': 'data: {"a":1}\n\nerror: {"code":500,"message":"boom"}\n\ndata: {"a":2}\n\n',
  'empty data and a lone blank line': 'data:\n\n\n\ndata: x\n\n',
  'unterminated last event': 'data: a\n\ndata: b',
  'data with no space and colons in the value': 'data:{"t":"a: b"}\n\ndata:  two spaces\n\n',
  'bytes that look like a mis-decoded BOM mid-stream': 'data: a\n\n\u00ef\u00bb\u00bfdata: b\n\n',
};

describe('SSE framing: the fast path cuts exactly what eventsource-parser cuts', () => {
  for (const [name, body] of Object.entries(bodies)) {
    it(name, () => {
      const want = reference(body);
      for (const chunks of chunkings(body)) expect(framed(chunks).payloads, JSON.stringify(chunks)).toEqual(want);
    });
  }

  it('one whole event per chunk takes the fast path and says where its payload starts', () => {
    const { payloads, fast } = framed(['data: {"a":1}\n\n', 'data:{"a":2}\n\n', 'data: x\r\n\r\n', 'data: y\n\n']);
    expect(payloads).toEqual([['{"a":1}', 'data'], ['{"a":2}', 'data'], ['x', 'data'], ['y', 'data']]);
    expect(fast).toBe(3);
    const framer = createFramer('sse', () => undefined);
    expect(framer.push('data: {"a":1}\n\n')).toBe(6);
    expect(framer.push('data:{"a":1}\n\n')).toBe(5);
    expect(framer.push('data: a\n\ndata: b\n\n')).toBe(-1);
    expect(framer.push('data: partial')).toBe(-1);
    // A pending partial event keeps the next whole-looking chunk off the fast path.
    expect(framer.push('\n\n')).toBe(-1);
  });
});
