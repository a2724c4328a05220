/**
 * The recorder's per-read fast path in bytes (exchange-recorder.ts): once a stream's chunks have a known shape —
 * `data: <prefix>"<text>"<suffix>\n\n` with only the text changing — a read is checked against that shape in the
 * read buffer itself, before any string is made: the head and tail bytes compare in place, and only the text
 * between them becomes a string. A read that is not exactly that shape with a plain ASCII text (no quote,
 * backslash, control or non-ASCII byte) is left to the string path, which reads it as before.
 */
export class SlotBytes {
  private readonly head: Buffer;
  private readonly tail: Buffer;

  constructor(head: string, tail: string) {
    this.head = Buffer.from(head, 'utf8');
    this.tail = Buffer.from(tail, 'utf8');
  }

  /**
   * The text of buf[start, end) when those bytes are exactly head + text + tail with a plain ASCII text: the same
   * string that decoding the bytes and cutting the text out between the head and tail strings gives.
   */
  match(buf: Buffer, start: number, end: number): string | undefined {
    const { head, tail } = this;
    const from = start + head.length;
    const to = end - tail.length;
    if (to < from) return undefined;
    for (let i = from; i < to; i++) {
      const c = buf[i] as number;
      if (c === 34 || c === 92 || c < 32 || c > 126) return undefined;
    }
    if (head.compare(buf, start, from) !== 0 || tail.compare(buf, to, end) !== 0) return undefined;
    return buf.toString('latin1', from, to);
  }
}
