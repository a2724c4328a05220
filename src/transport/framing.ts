import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { Framing } from '../dialects/types.js';

/** Receives each payload of a response body, with the field it came in ('error' only for SSE `error:`). */
export type PayloadSink = (payload: string, field: 'data' | 'error') => void;

/** Splits a decoded body into payloads according to a dialect's framing. Strings in, payloads out. */
export interface Framer {
  push(text: string): void;
  /** End of body: flush whatever is complete (an unterminated trailing JSON object still counts). */
  end(): void;
}

export function createFramer(framing: Framing, sink: PayloadSink, maxBufferBytes = 16 * 1024 * 1024): Framer {
  switch (framing) {
    case 'sse':
      return sseFramer(sink, maxBufferBytes);
    case 'ndjson':
      return delimitedFramer('\n', sink);
    case 'nul':
      return delimitedFramer('\0', sink);
    case 'nul-or-ndjson':
      return nulOrNdjsonFramer(sink);
    case 'json':
      return wholeBodyFramer(sink);
  }
}

function sseFramer(sink: PayloadSink, maxBufferSize: number): Framer {
  const parser: EventSourceParser = createParser({
    onEvent: (event) => sink(event.data, 'data'),
    // Older llama.cpp reports mid-stream failures in an `error:` field, which the SSE spec calls unknown.
    onError: (err) => {
      const e = err as { type?: string; field?: string; value?: string };
      if (e.type === 'unknown-field' && e.field === 'error' && e.value !== undefined) sink(e.value, 'error');
    },
    maxBufferSize,
  });
  return {
    push: (text) => parser.feed(text),
    // An event not closed by a blank line is incomplete by the SSE rules; feeding "\n\n" would forge it.
    end: () => parser.reset({ consume: false }),
  };
}

function delimitedFramer(delimiter: string, sink: PayloadSink): Framer {
  let buffered = '';
  const emit = (piece: string): void => {
    const line = piece.endsWith('\r') ? piece.slice(0, -1) : piece;
    if (line.trim() !== '') sink(line, 'data');
  };
  return {
    push(text) {
      let start = 0;
      let at = text.indexOf(delimiter);
      if (at === -1) {
        buffered += text;
        return;
      }
      emit(buffered + text.slice(0, at));
      buffered = '';
      start = at + 1;
      while ((at = text.indexOf(delimiter, start)) !== -1) {
        emit(text.slice(start, at));
        start = at + 1;
      }
      buffered = text.slice(start);
    },
    end() {
      if (buffered !== '') emit(buffered);
      buffered = '';
    },
  };
}

/** vLLM's legacy server used NUL up to 0.6.3 and LF later: the first delimiter seen decides. */
function nulOrNdjsonFramer(sink: PayloadSink): Framer {
  let inner: Framer | undefined;
  let pending = '';
  return {
    push(text) {
      if (inner) return inner.push(text);
      pending += text;
      const nul = pending.indexOf('\0');
      const lf = pending.indexOf('\n');
      if (nul === -1 && lf === -1) return;
      const useNul = nul !== -1 && (lf === -1 || nul < lf);
      inner = delimitedFramer(useNul ? '\0' : '\n', sink);
      inner.push(pending);
      pending = '';
    },
    end() {
      if (inner) inner.end();
      else if (pending.trim() !== '') sink(pending, 'data');
    },
  };
}

function wholeBodyFramer(sink: PayloadSink): Framer {
  const parts: string[] = [];
  return {
    push: (text) => void parts.push(text),
    end: () => {
      const body = parts.join('');
      if (body.trim() !== '') sink(body, 'data');
    },
  };
}
