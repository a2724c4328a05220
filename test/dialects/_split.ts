import type { Framing } from '../../src/dialects/types.js';

export interface Payload {
  payload: string;
  field: 'data' | 'error';
}

/**
 * Test-only stand-in for the transport's framing: byte pieces in, payloads out. SSE events end at a blank
 * line (LF or CRLF), `data:`/`error:` with an optional single space, comments and other fields dropped,
 * several data lines joined with LF; an unterminated last event is discarded as the SSE spec says.
 * NDJSON / NUL: one payload per non-empty record, a final unterminated record is kept.
 */
export function split(framing: Framing, pieces: Iterable<Uint8Array>): Payload[] {
  const decoder = new TextDecoder('utf-8');
  let text = '';
  for (const piece of pieces) text += decoder.decode(piece, { stream: true });
  text += decoder.decode();
  switch (framing) {
    case 'json':
      return [{ payload: text, field: 'data' }];
    case 'ndjson':
      return records(text, '\n');
    case 'nul':
      return records(text, '\0');
    case 'nul-or-ndjson': {
      const nul = text.indexOf('\0');
      const lf = text.indexOf('\n');
      return records(text, nul !== -1 && (lf === -1 || nul < lf) ? '\0' : '\n');
    }
    case 'sse':
      return sse(text);
  }
}

/** Cut `bytes` into pieces of 1..maxPiece bytes, deterministic for a seed. */
export function pieces(bytes: Uint8Array, seed: number, maxPiece = 7): Uint8Array[] {
  const out: Uint8Array[] = [];
  let s = seed >>> 0 || 1;
  for (let i = 0; i < bytes.length; ) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const n = 1 + (s % maxPiece);
    out.push(bytes.subarray(i, i + n));
    i += n;
  }
  return out;
}

function records(text: string, delimiter: string): Payload[] {
  const out: Payload[] = [];
  for (const raw of text.split(delimiter)) {
    const rec = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (rec.trim() !== '') out.push({ payload: rec, field: 'data' });
  }
  return out;
}

function sse(text: string): Payload[] {
  const out: Payload[] = [];
  const lines = text.split(/\r\n|\r|\n/);
  // The last element is whatever followed the final line end: an incomplete line, never dispatched.
  lines.pop();
  let data: string[] = [];
  let field: 'data' | 'error' = 'data';
  for (const line of lines) {
    if (line === '') {
      if (data.length > 0) out.push({ payload: data.join('\n'), field });
      data = [];
      field = 'data';
      continue;
    }
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'data' || name === 'error') {
      data.push(value);
      if (name === 'error') field = 'error';
    }
  }
  return out;
}
