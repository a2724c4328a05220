import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import type { ErrorCode } from '../core/errors.js';
import { describeBodyStart } from '../core/short-error.js';
import { textBetween } from '../dialects/_shared.js';
import type { Dialect, FrameEvent, GenerationRequest, HttpRequestPlan, StreamParser } from '../dialects/types.js';
import type { Exchange } from './exchange.js';
import { createFramer, type Framer } from './framing.js';

const MAX_ERROR_BODY = 64 * 1024;
const BODY_HEAD_CHARS = 2048;
/** onReply is called for the head, then at most once per this many ms of body reads (a stall watch needs no more). */
export const REPLY_NOTE_MS = 250;

/**
 * Everything one request observes, whichever HTTP client carries it: the stamps, the body cut into frames
 * and read by the dialect, the error. The client calls started → head → data… → end (or fail + finish);
 * `now` is the time of the read that brought the bytes, taken once per read by the caller.
 */
export class ExchangeRecorder {
  readonly ex: Exchange = { sentAtMs: NaN, endAtMs: NaN, contentTimesMs: [], textParts: [], done: false };
  /** Set by head(): the reply began (a retry is no longer allowed). */
  replyStarted = false;
  settled = false;
  private readonly parser: StreamParser;
  // StringDecoder keeps split UTF-8 sequences like TextDecoder's stream mode at a third of its cost per chunk;
  // made on first need (most streams never split a character between reads).
  private decoderMade: StringDecoder | undefined;
  private readonly framer: Framer;
  private now = 0;
  private ok = true;
  private first = true;
  private errorBody = '';
  private retryAfterNote = '';
  private payloads = 0;
  private bodyHead = '';
  private allFramesCounted = true;
  private countedTokens = 0;
  /** Set when the last chunk was one event in the parser's text slot: that chunk's text before and after the slot. */
  private slotHead: string | undefined;
  private slotTail = '';
  /** The decoder may hold the first bytes of a character split between reads. */
  private splitChar = false;
  /** When onReply was last called. */
  private repliedAt = -Infinity;

  constructor(
    private readonly plan: HttpRequestPlan,
    private readonly dialect: Dialect,
    req: GenerationRequest | undefined,
    private readonly apiKey: string | undefined,
    private readonly resolve: (ex: Exchange) => void,
    /** Lower-case name of the response header that names the serving replica (`--replica-header`). */
    private readonly replicaHeader?: string,
    /** The server sent something for this request (its head, body bytes): a run's stall watch (load/stall.ts). */
    private readonly onReply?: () => void,
  ) {
    this.parser = dialect.createParser(req);
    this.framer = createFramer(plan.framing, (payload, field) => {
      this.payloads++;
      this.onFrame(this.parser.frame(payload, field));
    });
  }

  /** The request (or its retry: the server never saw the first attempt) is being written now. */
  started(now: number): void {
    this.ex.sentAtMs = now;
  }

  /** The response head arrived. `header` reads one response header by its lower-case name. */
  head(now: number, status: number, header: (name: string) => string | undefined): void {
    this.noteReply(now);
    this.ex.headersAtMs = now;
    this.replyStarted = true;
    this.ex.httpStatus = status;
    this.ok = status >= 200 && status < 300;
    // The server's id for this request, to join the record with server-side traces (the sim's truth).
    const rid = header('x-sim-request-id') ?? header('x-request-id');
    if (rid !== undefined) this.ex.serverRequestId = rid;
    if (this.replicaHeader !== undefined) {
      const tag = header(this.replicaHeader);
      if (tag !== undefined) this.ex.replicaTag = tag;
    }
    // Failures are recorded, never retried behind the user's back; Retry-After goes into the message.
    // Counts some servers send only as headers (TEI's x-compute-tokens); body usage, if any, is merged over it.
    const headerUsage = this.ok ? this.dialect.usageFromHeaders?.(header) : undefined;
    if (headerUsage) this.ex.usage = headerUsage;
    const retryAfter = this.ok ? undefined : header('retry-after');
    if (retryAfter !== undefined) this.retryAfterNote = ` (Retry-After: ${retryAfter})`;
  }

  /** Body bytes buf[start, end) of one read (the caller may reuse buf once this returns). */
  data(now: number, buf: Buffer, start: number, end: number): void {
    this.now = now;
    if (now - this.repliedAt >= REPLY_NOTE_MS) this.noteReply(now);
    if (!this.ok) {
      if (this.errorBody.length < MAX_ERROR_BODY) this.errorBody += this.decoder().write(buf.subarray(start, end));
      return;
    }
    let text: string;
    // Ending in an ASCII byte, with no split character held from the last read, the bytes decode whole: the
    // same string StringDecoder gives, without a view object and its wrapper per read.
    const endsAscii = end > start && (buf[end - 1] as number) < 0x80;
    if (endsAscii && !this.splitChar) text = buf.toString('utf8', start, end);
    else {
      text = this.decoder().write(buf.subarray(start, end));
      // A write that ends in an ASCII byte leaves nothing in the decoder; any other may have.
      this.splitChar = !endsAscii;
    }
    const { slotHead } = this;
    if (slotHead !== undefined) {
      // The same shape as the last chunk, one event whose payload the parser read by its template: the
      // parser would answer { text } (nothing for ''), so that is taken here without it (StreamParser.textSlot).
      const piece = textBetween(text, slotHead, this.slotTail);
      if (piece !== undefined) {
        this.payloads++;
        if (piece !== '') {
          this.ex.contentTimesMs.push(now);
          this.ex.textParts.push(piece);
          this.ex.firstAnswerAtMs ??= now;
          this.allFramesCounted = false;
        }
        return;
      }
    }
    if (this.first && text !== '') {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    // Only a body with no payload at all is described by its start.
    if (this.payloads === 0 && this.bodyHead.length < BODY_HEAD_CHARS) this.bodyHead += text.slice(0, BODY_HEAD_CHARS);
    const at = this.framer.push(text);
    const slot = at >= 0 ? this.parser.textSlot?.() : undefined;
    this.slotHead = slot ? text.slice(0, at) + slot.prefix : undefined;
    if (slot) this.slotTail = `${slot.suffix}\n\n`;
  }

  private noteReply(now: number): void {
    if (!this.onReply) return;
    this.repliedAt = now;
    this.onReply();
  }

  /** The body ended cleanly. */
  end(now: number): void {
    this.now = now;
    const { ex, plan } = this;
    if (!this.ok) {
      const status = ex.httpStatus ?? 0;
      this.fail('E_HTTP_STATUS', `HTTP ${status}: ${this.dialect.errorMessage(status, this.errorBody + (this.decoderMade?.end() ?? ''))}${this.retryAfterNote}`, status);
      return this.finish();
    }
    const tail = this.decoderMade?.end() ?? '';
    if (tail) this.framer.push(tail);
    this.framer.end();
    this.onFrame(this.parser.end?.() ?? null);
    if (this.payloads === 0 && this.bodyHead.trim() !== '' && !ex.error) {
      this.fail('E_STREAM_PARSE', `the reply is not a ${plan.framing} ${plan.framing === 'json' ? 'body' : 'stream'}: ${describeBodyStart(this.bodyHead)}`);
    }
    if (!ex.done && !ex.error) this.fail('E_STREAM_TRUNCATED', 'stream ended without its final event');
    this.finish();
  }

  /** Keeps the first failure; a server that echoes the credentials must not get them written into records. */
  fail(code: ErrorCode, raw: string, httpStatus?: number): void {
    const message = this.apiKey ? raw.split(this.apiKey).join('<redacted>') : raw;
    if (!this.ex.error) this.ex.error = httpStatus === undefined ? { code, message } : { code, message, httpStatus };
  }

  finish(): void {
    if (this.settled) return;
    this.settled = true;
    const { ex } = this;
    ex.endAtMs = performance.now();
    if (Number.isNaN(ex.sentAtMs)) ex.sentAtMs = ex.endAtMs;
    if (ex.contentTimesMs.length > 0 && this.allFramesCounted) ex.frameTokens = this.countedTokens;
    this.resolve(ex);
  }

  private decoder(): StringDecoder {
    return (this.decoderMade ??= new StringDecoder('utf8'));
  }

  private onFrame(event: FrameEvent | null): void {
    if (!event) return;
    const { ex } = this;
    if ((event.text !== undefined && event.text !== '') || (event.tokens ?? 0) > 0) {
      ex.contentTimesMs.push(this.now);
      if (event.text) ex.textParts.push(event.text);
      if (event.reasoning) {
        (ex.reasoningParts ??= []).push(event.reasoning);
        // A frame of reasoning alone; one that also carries answer text starts the answer.
        if (event.text === event.reasoning) ex.reasoningFrames = (ex.reasoningFrames ?? 0) + 1;
        else ex.firstAnswerAtMs ??= this.now;
      } else ex.firstAnswerAtMs ??= this.now;
      if (event.tokens === undefined) this.allFramesCounted = false;
      else this.countedTokens += event.tokens;
    }
    if (event.usage) ex.usage = ex.usage ? { ...ex.usage, ...event.usage } : event.usage;
    if (event.finishReason) ex.finishReason = event.finishReason;
    if (event.error) this.fail(event.error.code ?? (event.error.type === 'parse' ? 'E_STREAM_PARSE' : 'E_STREAM_ERROR'), event.error.message);
    if (event.done) ex.done = true;
  }
}
