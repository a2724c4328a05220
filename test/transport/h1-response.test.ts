import { describe, expect, it } from 'vitest';
import { ResponseReader } from '../../src/transport/h1-response.js';

interface Read {
  status?: number;
  headers?: Record<string, string>;
  body: string;
  complete: number;
  ok: boolean;
  error?: string;
  keepAlive: boolean;
  hintMs?: number;
}

/** Feeds `raw` in pieces of `size` bytes (each copied into a reused buffer, as the client's reads are). */
function read(raw: string, size: number, close = false): Read {
  const reader = new ResponseReader();
  const out: Read = { body: '', complete: 0, ok: true, keepAlive: false };
  const bytes = Buffer.from(raw, 'latin1');
  const buf = Buffer.alloc(64 * 1024);
  const sink = {
    head: (status: number, headers: ReadonlyMap<string, string>) => {
      out.status = status;
      out.headers = Object.fromEntries(headers);
    },
    body: (b: Buffer, s: number, e: number) => void (out.body += b.toString('latin1', s, e)),
    complete: () => void out.complete++,
  };
  for (let i = 0; i < bytes.length && out.ok; i += size) {
    const n = bytes.copy(buf, 0, i, Math.min(bytes.length, i + size));
    buf.fill(0x41, n, n + 16);
    out.ok = reader.feed(buf, n, sink);
  }
  if (close && out.ok) out.ok = reader.closeEnds(sink);
  out.keepAlive = reader.keepAlive;
  if (reader.keepAliveHintMs !== undefined) out.hintMs = reader.keepAliveHintMs;
  if (reader.error !== undefined) out.error = reader.error;
  return out;
}

const sizes = [1, 2, 3, 5, 8, 64, 4096];
const chunked = (parts: string[]): string => parts.map((p) => `${Buffer.byteLength(p, 'latin1').toString(16)}\r\n${p}\r\n`).join('') + '0\r\n\r\n';

describe('ResponseReader: one HTTP/1.1 response, whatever the read boundaries', () => {
  it('chunked body, split at every size, with extensions, upper-case hex and trailers', () => {
    const body = 'data: {"a":1}\n\n'.repeat(20);
    const head = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Request-Id: r1\r\nTransfer-Encoding: chunked\r\n\r\n';
    const parts = ['data: {"a":1}\n\n'.repeat(5), 'data: {"a":1}\n\n'.repeat(15)];
    const raw = head + chunked(parts);
    const withExtension = head + chunked(parts).replace('\r\n', ';ext=1\r\n');
    const raw2 = raw.replace(/0\r\n\r\n$/, '0\r\nx-trailer: t\r\n\r\n');
    const upper = raw.replace(/\r\n([0-9a-f]+)\r\n/g, (_, h: string) => `\r\n${h.toUpperCase()}\r\n`);
    for (const r of [raw, withExtension, raw2, upper]) {
      for (const size of sizes) {
        const got = read(r, size);
        expect(got, `size ${size}`).toMatchObject({ status: 200, body, complete: 1, ok: true, keepAlive: true });
        expect(got.headers?.['x-request-id']).toBe('r1');
      }
    }
  });

  it('Content-Length, an empty body, 204, until-close, HTTP/1.0 and Connection: close', () => {
    for (const size of sizes) {
      expect(read('HTTP/1.1 429 Too Many\r\ncontent-length: 5\r\nretry-after: 3\r\n\r\nslow!', size)).toMatchObject({ status: 429, body: 'slow!', complete: 1, keepAlive: true });
      expect(read('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n', size)).toMatchObject({ body: '', complete: 1, keepAlive: true });
      expect(read('HTTP/1.1 204 No Content\r\n\r\n', size)).toMatchObject({ status: 204, complete: 1, keepAlive: true });
      expect(read('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil the end', size, true)).toMatchObject({ body: 'until the end', complete: 1, ok: true, keepAlive: false });
      expect(read('HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok', size)).toMatchObject({ body: 'ok', keepAlive: false });
      expect(read('HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 2\r\n\r\nok', size)).toMatchObject({ keepAlive: true });
      expect(read('HTTP/1.1 200 OK\r\nConnection: close\r\ncontent-length: 2\r\n\r\nok', size)).toMatchObject({ keepAlive: false });
    }
  });

  it('a 103 interim reply is skipped; bare LF line ends are read; Keep-Alive timeout is kept', () => {
    for (const size of sizes) {
      const got = read('HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 200 OK\nkeep-alive: timeout=5, max=100\ncontent-length: 3\n\nabc', size);
      expect(got).toMatchObject({ status: 200, body: 'abc', complete: 1, keepAlive: true, hintMs: 5000 });
    }
  });

  it('malformed replies are errors, never guesses', () => {
    expect(read('SSH-2.0-OpenSSH\r\n\r\n', 4096)).toMatchObject({ ok: false, error: expect.stringMatching(/not an HTTP\/1.1 response/) });
    expect(read('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nab\r\n', 4096)).toMatchObject({ ok: false, error: expect.stringMatching(/bad chunk size/) });
    expect(read('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabX\r\n', 4096)).toMatchObject({ ok: false, error: expect.stringMatching(/CRLF/) });
    expect(read('HTTP/1.1 200 OK\r\ncontent-length: x\r\n\r\n', 4096)).toMatchObject({ ok: false, error: expect.stringMatching(/Content-Length/) });
    expect(read('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokEXTRA', 4096)).toMatchObject({ complete: 1, ok: false, error: expect.stringMatching(/after the end/) });
    expect(read(`HTTP/1.1 200 OK\r\nx: ${'y'.repeat(70_000)}\r\n\r\n`, 4096)).toMatchObject({ ok: false, error: expect.stringMatching(/64 KiB/) });
    // A chunked body cut by the close is not complete.
    expect(read('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab', 4096, true)).toMatchObject({ complete: 0, ok: false });
  });

  it('both Transfer-Encoding and Content-Length: read by the coding, connection not reused', () => {
    expect(read('HTTP/1.1 200 OK\r\ncontent-length: 100\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n', 7)).toMatchObject({ body: 'ok', complete: 1, keepAlive: false });
  });
});
