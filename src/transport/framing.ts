import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { Framing } from '../dialects/types.js';

/** Receives each payload of a response body, with the field it came in ('error' only for SSE `error:`). */
export type PayloadSink = (payload: string, field: 'data' | 'error') => void;

/** Splits a decoded body into payloads according to a dialect's framing. Strings in, payloads out. */
export interface Framer {
  /**
   * Returns where the payload starts when `text` was exactly one whole event and nothing else (SSE
   * `data: <payload>\n\n` read on the fast path, the framer left with nothing pending); −1 otherwise.
   */
  push(text: string): number;
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
  let parser: EventSourceParser | undefined;
  // True while the full parser holds nothing (no partial line, no pending event): the fast path may run.
  let clean = true;
  let fastUsed = false;
  const full = (): EventSourceParser => {
    if (parser) return parser;
    parser = createParser({
      onEvent: (event) => sink(event.data, 'data'),
      // Older llama.cpp reports mid-stream failures in an `error:` field, which the SSE spec calls unknown.
      onError: (err) => {
        const e = err as { type?: string; field?: string; value?: string };
        if (e.type === 'unknown-field' && e.field === 'error' && e.value !== undefined) sink(e.value, 'error');
      },
      maxBufferSize,
    });
    // It drops a byte-order mark from the first chunk it sees: after fast-path chunks that is not the body's first.
    if (fastUsed) parser.feed('');
    return parser;
  };
  return {
    push: (text) => {
      // The usual read, one whole `data: …` event and nothing else, is cut here: the same payload the full
      // parser gives (no CR, one data line, its blank line last), without its per-event objects.
      if (clean) {
        const n = text.length;
        if (n > 7 && text.charCodeAt(n - 1) === 10 && text.charCodeAt(n - 2) === 10 && text.startsWith('data:')) {
          const lf = text.indexOf('\n', 5);
          if (lf === n - 2 && text.indexOf('\r') === -1) {
            fastUsed = true;
            const at = text.charCodeAt(5) === 32 ? 6 : 5;
            sink(text.slice(at, lf), 'data');
            return at;
          }
        }
      }
      full().feed(text);
      // A chunk that ends with a blank line leaves the full parser with no partial line and no pending event.
      clean = text.endsWith('\n\n') || text.endsWith('\r\n\r\n');
      return -1;
    },
    // An event not closed by a blank line is incomplete by the SSE rules; feeding "\n\n" would forge it.
    end: () => parser?.reset({ consume: false }),
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
        return -1;
      }
      emit(buffered + text.slice(0, at));
      buffered = '';
      start = at + 1;
      while ((at = text.indexOf(delimiter, start)) !== -1) {
        emit(text.slice(start, at));
        start = at + 1;
      }
      buffered = text.slice(start);
      return -1;
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
      if (nul === -1 && lf === -1) return -1;
      const useNul = nul !== -1 && (lf === -1 || nul < lf);
      inner = delimitedFramer(useNul ? '\0' : '\n', sink);
      inner.push(pending);
      pending = '';
      return -1;
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
    push: (text) => {
      parts.push(text);
      return -1;
    },
    end: () => {
      const body = parts.join('');
      if (body.trim() !== '') sink(body, 'data');
    },
  };
}
