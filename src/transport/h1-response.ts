/**
 * An incremental HTTP/1.1 response reader for h1-client.ts: status line and headers, then the body by
 * chunked transfer coding, Content-Length, or until the connection closes (RFC 9112 §6.3). Body bytes come
 * out as ranges of the caller's read buffer, so nothing is copied or allocated per read on a stream.
 */

const CR = 13;
const LF = 10;
const MAX_HEAD_CHARS = 64 * 1024;
const MAX_SIZE_LINE = 1024;

/** Receives one response. Views passed to body() are valid only during the call. */
export interface ResponseSink {
  head(status: number, headers: ReadonlyMap<string, string>): void;
  /** Body bytes buf[start, end), valid only during the call. */
  body(buf: Buffer, start: number, end: number): void;
  complete(): void;
}

const enum State {
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  UntilClose,
  Done,
}

export class ResponseReader {
  /** After complete(): the connection may carry another request. */
  keepAlive = false;
  /** The server's `Keep-Alive: timeout=N` in ms, when it sent one. */
  keepAliveHintMs: number | undefined;
  /** Why the response could not be read (set when feed() returns false). */
  error: string | undefined;
  private state = State.Head;
  private head = '';
  private remaining = 0;
  private line = '';
  private started = false;

  /** Ready for the next response on the same connection. */
  reset(): void {
    this.state = State.Head;
    this.head = '';
    this.remaining = 0;
    this.line = '';
    this.started = false;
    this.keepAlive = false;
    this.keepAliveHintMs = undefined;
    this.error = undefined;
  }

  /** Any byte of this response arrived. */
  get replyStarted(): boolean {
    return this.started;
  }

  get done(): boolean {
    return this.state === State.Done;
  }

  /** Reads buf[0, end). False on a malformed response (see `error`) or on bytes after its end. */
  feed(buf: Buffer, end: number, sink: ResponseSink): boolean {
    let i = 0;
    if (end > 0) this.started = true;
    while (i < end) {
      switch (this.state) {
        case State.Head: {
          i = this.readHead(buf, i, end, sink);
          if (i < 0) return false;
          break;
        }
        case State.Length: {
          const n = Math.min(this.remaining, end - i);
          sink.body(buf, i, i + n);
          i += n;
          this.remaining -= n;
          if (this.remaining === 0) this.finish(sink);
          break;
        }
        case State.UntilClose:
          sink.body(buf, i, end);
          i = end;
          break;
        case State.ChunkData: {
          const n = Math.min(this.remaining, end - i);
          sink.body(buf, i, i + n);
          i += n;
          this.remaining -= n;
          if (this.remaining === 0) this.state = State.ChunkDataEnd;
          break;
        }
        case State.ChunkDataEnd: {
          const c = buf[i++];
          if (c === CR) break;
          if (c !== LF) return this.fail('a chunk does not end with CRLF');
          this.state = State.ChunkSize;
          break;
        }
        case State.ChunkSize:
          if (this.line === '') {
            // The usual case, a whole "<hex>\r\n" line in this read, is read straight from the bytes.
            const next = this.chunkSizeFast(buf, i, end);
            if (next !== -1) {
              i = next;
              break;
            }
          }
        // falls through
        case State.Trailers: {
          const at = indexOfLf(buf, i, end);
          const piece = latin1(buf, i, at === -1 ? end : at);
          i = at === -1 ? end : at + 1;
          this.line += piece;
          if (this.line.length > MAX_SIZE_LINE) return this.fail('a chunk size or trailer line is too long');
          if (at === -1) break;
          const line = this.line.endsWith('\r') ? this.line.slice(0, -1) : this.line;
          this.line = '';
          if (this.state === State.Trailers) {
            if (line === '') this.finish(sink);
            break;
          }
          const semi = line.indexOf(';');
          const hex = (semi === -1 ? line : line.slice(0, semi)).trim();
          if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) return this.fail(`bad chunk size "${line.slice(0, 40)}"`);
          this.remaining = Number.parseInt(hex, 16);
          this.state = this.remaining === 0 ? State.Trailers : State.ChunkData;
          break;
        }
        case State.Done:
          return this.fail('the server sent bytes after the end of the response');
      }
    }
    return true;
  }

  /** The connection closed: true when that ends this response (a body delimited by the close). */
  closeEnds(sink: ResponseSink): boolean {
    if (this.state === State.UntilClose) {
      this.finish(sink);
      return true;
    }
    return this.state === State.Done;
  }

  private fail(message: string): false {
    this.error = message;
    this.keepAlive = false;
    return false;
  }

  /** Reads "<hex>\r\n" at i; −1 when the line is anything else (extensions, spaces, split across reads). */
  private chunkSizeFast(buf: Buffer, i: number, end: number): number {
    let size = 0;
    let k = i;
    for (; k < end && k - i < 12; k++) {
      const c = buf[k] as number;
      const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
      if (d === -1) break;
      size = size * 16 + d;
    }
    if (k === i) return -1;
    if (buf[k] === CR && k + 1 < end && buf[k + 1] === LF) k += 2;
    else if (buf[k] === LF && k < end) k += 1;
    else return -1;
    this.remaining = size;
    this.state = size === 0 ? State.Trailers : State.ChunkData;
    return k;
  }

  private bad(message: string): number {
    this.fail(message);
    return -1;
  }

  private finish(sink: ResponseSink): void {
    this.state = State.Done;
    sink.complete();
  }

  /** Collects the head; returns the index after it, or −1 on error. Parses and reports it once whole. */
  private readHead(buf: Buffer, i: number, end: number, sink: ResponseSink): number {
    const from = Math.max(0, this.head.length - 3);
    this.head += latin1(buf, i, end);
    const stop = headEnd(this.head, from);
    if (stop === -1) {
      if (this.head.length > MAX_HEAD_CHARS) return this.bad('the response head is larger than 64 KiB');
      return end;
    }
    const text = this.head.slice(0, this.head.charCodeAt(stop.at - 1) === CR ? stop.at - 1 : stop.at);
    const consumed = end - (this.head.length - stop.after);
    this.head = '';
    const lines = text.split(/\r?\n/);
    const m = /^HTTP\/1\.([01]) (\d{3})(?: .*)?$/.exec(lines[0] ?? '');
    if (!m) return this.bad(`not an HTTP/1.1 response: ${JSON.stringify((lines[0] ?? '').slice(0, 60))}`);
    const status = Number(m[2]);
    const headers = new Map<string, string>();
    for (let k = 1; k < lines.length; k++) {
      const line = lines[k] as string;
      const colon = line.indexOf(':');
      if (colon <= 0) return this.bad(`bad header line ${JSON.stringify(line.slice(0, 60))}`);
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      const had = headers.get(name);
      headers.set(name, had === undefined ? value : `${had}, ${value}`);
    }
    // 1xx interim replies (103 Early Hints) come before the real one; 100 Continue was never asked for.
    if (status >= 100 && status < 200) {
      if (status === 100 || status === 101) return this.bad(`unexpected ${status} reply`);
      return consumed;
    }
    const connection = (headers.get('connection') ?? '').toLowerCase();
    this.keepAlive = m[1] === '1' ? !/\bclose\b/.test(connection) : /\bkeep-alive\b/.test(connection);
    const hint = /timeout=(\d+)/.exec(headers.get('keep-alive') ?? '');
    this.keepAliveHintMs = hint ? Number(hint[1]) * 1000 : undefined;
    const te = headers.get('transfer-encoding');
    const cl = headers.get('content-length');
    if (te !== undefined) {
      if (!/(?:^|,)\s*chunked\s*$/i.test(te)) {
        this.keepAlive = false;
        this.state = State.UntilClose;
      } else this.state = State.ChunkSize;
      // A message with both is a smuggling risk: read it by the transfer coding, then drop the connection.
      if (cl !== undefined) this.keepAlive = false;
    } else if (status === 204 || status === 304) {
      this.state = State.Done;
    } else if (cl !== undefined) {
      if (!/^\d{1,15}$/.test(cl)) return this.bad(`bad Content-Length "${cl.slice(0, 40)}"`);
      this.remaining = Number(cl);
      this.state = this.remaining === 0 ? State.Done : State.Length;
    } else {
      this.keepAlive = false;
      this.state = State.UntilClose;
    }
    sink.head(status, headers);
    if (this.state === State.Done) sink.complete();
    return consumed;
  }
}

/** End of the head (a blank line, CRLF or bare LF) searched from `from`: where it starts and where it stops. */
function headEnd(s: string, from: number): { at: number; after: number } | -1 {
  let lf = s.indexOf('\n', from);
  while (lf !== -1) {
    if (s.charCodeAt(lf + 1) === LF) return { at: lf, after: lf + 2 };
    if (s.charCodeAt(lf + 1) === CR && s.charCodeAt(lf + 2) === LF) return { at: lf, after: lf + 3 };
    lf = s.indexOf('\n', lf + 1);
  }
  return -1;
}

function indexOfLf(buf: Buffer, from: number, end: number): number {
  for (let i = from; i < end; i++) if (buf[i] === LF) return i;
  return -1;
}

function latin1(buf: Buffer, from: number, to: number): string {
  return buf.toString('latin1', from, to);
}
