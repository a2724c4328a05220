/**
 * One generation in flight: receives engine events, turns them into the engine's wire bytes and
 * writes each token's frame at its planned time, stamping ground truth. Faults that act on the
 * response (reset, stall, malformed, truncate, slow first byte) are applied here.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { SimRequestHandle, SimRequestListener } from '../types.js';
import type { FinishReason, GenEncoder, GenPlan, GenTimings, HttpReply } from '../wire/types.js';
import { type FaultDecision, type FaultSpec, faultToken, malformedFrame, resetConnection, wholeReplyFault } from './faults.js';
import type { TruthRecord, TruthStore } from './truth.js';

export interface ActiveRequestDeps {
  res: ServerResponse;
  rec: TruthRecord;
  plan: GenPlan;
  truth: TruthStore;
  /** Headers every response carries (engine's common headers + x-sim-request-id). */
  headers: Record<string, string>;
  fault: FaultDecision | undefined;
  faults: FaultSpec;
  /** Token count and finish reason the engine will produce (same rule as the engine). */
  expectedTokens: number;
  expectedReason: FinishReason;
  /** The engine has a prefix cache: ground truth records each request's cached tokens. */
  prefixCaching?: boolean;
  onDone(): void;
}

export class ActiveRequest implements SimRequestListener {
  handle: SimRequestHandle | undefined;
  private readonly res: ServerResponse;
  private readonly rec: TruthRecord;
  private readonly enc: GenEncoder;
  private readonly stream: boolean;
  private readonly t: GenTimings;
  private count = 0;
  private ended = false;
  private headSent = false;
  private closed = false;
  /** Frames held back while a stall or slow first byte is in effect. */
  private gatedUntil = 0;
  private pending = '';
  private pendingFrom = 0;
  private pendingEnd = false;
  /** Token ranges of writes whose callback has not fired: [from, to, stamped] triples. */
  private readonly unacked: number[] = [];
  private readonly faultAt: number;

  constructor(private readonly d: ActiveRequestDeps) {
    this.res = d.res;
    this.rec = d.rec;
    this.enc = d.plan.encoder;
    this.stream = d.plan.stream;
    this.t = { arrivalMs: d.rec.arrivalMs, prefillStartMs: undefined, prefillEndMs: undefined, firstTokenMs: undefined, nowMs: d.rec.arrivalMs };
    this.faultAt = d.fault ? faultToken(d.fault.at, d.expectedTokens) : -1;
    this.res.on('close', () => {
      if (!this.ended) this.abandon('cancelled');
    });
    if (this.stream && d.fault?.kind === 'slow-first-byte') this.gate(d.rec.arrivalMs + d.faults.slowMs);
  }

  /**
   * After the engine accepted the request: send the stream's headers now (unless held back). Tokens can
   * arrive before this (the driver may run due events inside submit), so emit() sends them too.
   */
  start(): void {
    if (this.stream && !this.ended && this.gatedUntil === 0) this.sendHead();
  }

  onPrefillStart(atMs: number, cachedTokens = 0): void {
    this.rec.prefillStartMs = atMs;
    this.t.prefillStartMs = atMs;
    this.t.cachedTokens = cachedTokens;
    if (this.d.prefixCaching) this.rec.cachedTokens = cachedTokens;
  }

  onPrefillEnd(atMs: number): void {
    this.rec.prefillEndMs = atMs;
    this.t.prefillEndMs = atMs;
  }

  /** P/D: the prompt's KV reached the decode engine (ground truth's transferEndMs). */
  onTransferEnd(atMs: number): void {
    this.rec.transferEndMs = atMs;
  }

  onPreempt(): void {
    this.rec.preemptions++;
  }

  /** One engine step produced this token (its own step; onTokens counts a speculative step once). */
  onToken(index: number, atMs: number): void {
    this.t.tokenSteps = (this.t.tokenSteps ?? 0) + 1;
    this.token(index, atMs);
  }

  private token(index: number, atMs: number): void {
    if (this.ended) return;
    this.rec.plannedMs[index] = atMs;
    this.rec.writtenMs[index] = Number.NaN;
    this.count = index + 1;
    this.t.firstTokenMs ??= atMs;
    if (!this.stream) return;
    const final = index === this.d.expectedTokens - 1;
    let prefix = '';
    if (index === this.faultAt && this.d.fault) {
      const kind = this.d.fault.kind;
      if (kind === 'reset') return this.reset();
      if (kind === 'truncate') return this.truncate();
      if (kind === 'stall') this.gate(performance.now() + this.d.faults.stallMs);
      if (kind === 'malformed') prefix = malformedFrame(this.enc.token(index, null, this.t), this.enc.delimiter);
    }
    this.t.nowMs = atMs;
    const frame = prefix + this.enc.token(index, final ? this.d.expectedReason : null, this.t);
    this.emit(frame, index, index + 1, final);
    if (final) this.finish(this.d.expectedReason, atMs);
  }

  /** Several tokens of one speculative step: one frame where the encoder writes multi-token events. */
  onTokens(from: number, count: number, atMs: number): void {
    const to = from + count;
    this.t.tokenSteps = (this.t.tokenSteps ?? 0) + 1;
    const faultHere = this.faultAt >= from && this.faultAt < to;
    if (this.ended || !this.stream || !this.enc.tokens || faultHere || this.gatedUntil > 0) {
      for (let i = from; i < to; i++) this.token(i, atMs);
      return;
    }
    for (let i = from; i < to; i++) {
      this.rec.plannedMs[i] = atMs;
      this.rec.writtenMs[i] = Number.NaN;
    }
    this.count = to;
    this.t.firstTokenMs ??= atMs;
    this.t.nowMs = atMs;
    const final = to === this.d.expectedTokens;
    this.emit(this.enc.tokens(from, count, final ? this.d.expectedReason : null, this.t), from, to, final);
    if (final) this.finish(this.d.expectedReason, atMs);
  }

  onFinish(reason: FinishReason, atMs: number): void {
    if (this.ended) return;
    if (reason === 'abort' && this.res.destroyed) return this.abandon('cancelled');
    this.t.nowMs = atMs;
    if (this.stream) {
      this.emit(this.enc.tail(this.count, reason, this.t), this.count, this.count, true);
      return this.finish(reason, atMs);
    }
    this.finish(reason, atMs);
    this.replyWhole(this.enc.body(this.count, reason, this.t));
  }

  private finish(reason: FinishReason, atMs: number): void {
    this.ended = true;
    this.rec.finishReason = reason;
    this.rec.finishedMs = atMs;
    if (this.rec.outcome === null) this.rec.outcome = reason === 'abort' ? 'aborted' : 'completed';
    if (!this.stream) return;
    if (this.gatedUntil === 0) this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.d.truth.close(this.rec);
    this.d.onDone();
  }

  private sendHead(): void {
    if (this.headSent || this.res.destroyed) return;
    this.headSent = true;
    this.res.writeHead(200, { ...this.d.headers, ...this.enc.streamHeaders() });
    this.res.flushHeaders();
  }

  private emit(data: string, from: number, to: number, last: boolean): void {
    if (this.gatedUntil > 0) {
      if (this.pending === '') this.pendingFrom = from;
      this.pending += data;
      this.pendingEnd ||= last;
      return;
    }
    this.sendHead();
    this.write(data, from, to, last);
  }

  /** One write (plus the chunked terminator when last); stamps written times of tokens [from, to). */
  private write(data: string, from: number, to: number, last: boolean): void {
    const res = this.res;
    if (res.destroyed) return;
    this.unacked.push(from, to, 0);
    const sock = res.socket as Socket | null;
    if (last || !sock) {
      res.end(data, this.acked);
      // node:http corks until the next tick; uncork so the bytes reach the kernel now, in this pass
      if (sock && sock.writableCorked > 0) sock.uncork();
    } else {
      // Headers are out and the body is chunked: frame the chunk ourselves and hand it to the socket in
      // one write (res.write costs three buffered pieces, a cork and a deferred writev per frame).
      sock.write(Buffer.byteLength(data).toString(16) + '\r\n' + data + '\r\n', this.acked);
    }
    if (!sock || sock.writableLength === 0) {
      this.stamp(from, to, performance.now());
      this.unacked[this.unacked.length - 1] = 1;
    }
  }

  private readonly acked = (): void => {
    const from = this.unacked.shift();
    const to = this.unacked.shift();
    const stamped = this.unacked.shift();
    if (from === undefined || to === undefined || stamped === 1) return;
    this.stamp(from, to, performance.now());
  };

  private stamp(from: number, to: number, now: number): void {
    const rec = this.rec;
    for (let i = from; i < to; i++) {
      rec.writtenMs[i] = now;
      if (this.stream) this.d.truth.noteLateness(now - (rec.plannedMs[i] ?? now));
    }
  }

  /** Hold writes until `untilMs`, then send everything held in one write. */
  private gate(untilMs: number): void {
    this.gatedUntil = untilMs;
    setTimeout(() => this.ungate(), Math.max(0, untilMs - performance.now()));
  }

  private ungate(): void {
    this.gatedUntil = 0;
    // A client that gave up during the stall left a finished request waiting here to be closed.
    if (this.res.destroyed) {
      if (this.ended) this.close();
      return;
    }
    this.sendHead();
    if (this.pending !== '') {
      const data = this.pending;
      this.pending = '';
      this.write(data, this.pendingFrom, this.count, this.pendingEnd);
    }
    if (this.ended) this.close();
  }

  private reset(): void {
    this.ended = true;
    this.rec.outcome = 'fault';
    this.handle?.cancel();
    resetConnection(this.res);
    this.rec.finishedMs = performance.now();
    this.close();
  }

  private truncate(): void {
    this.ended = true;
    this.rec.outcome = 'fault';
    this.handle?.cancel();
    this.rec.finishedMs = performance.now();
    this.sendHead();
    if (this.pending !== '') {
      const data = this.pending;
      this.pending = '';
      this.write(data, this.pendingFrom, this.count - 1, true);
    } else if (!this.res.destroyed) this.res.end();
    // the token that triggered the fault was never written
    this.rec.plannedMs.length = this.count - 1;
    this.rec.writtenMs.length = this.count - 1;
    this.gatedUntil = 0;
    this.close();
  }

  /** Client went away (or the engine aborted for a closed socket). */
  private abandon(outcome: 'cancelled'): void {
    this.ended = true;
    this.rec.outcome = outcome;
    this.rec.finishedMs = performance.now();
    this.handle?.cancel();
    this.close();
  }

  /** Non-streaming reply, with faults applied to the whole body. */
  private replyWhole(reply: HttpReply): void {
    const kind = this.d.fault?.kind;
    const { delayMs: delay, body } = wholeReplyFault(kind, reply.body, this.d.faults, this.rec.arrivalMs, performance.now());
    if (kind) this.rec.outcome = 'fault';
    const send = (): void => {
      const res = this.res;
      if (res.destroyed) return this.close();
      if (kind === 'reset') {
        resetConnection(res);
        return this.close();
      }
      const headers: Record<string, string> = { ...this.d.headers, ...reply.headers };
      // truncate: the body ends early on a chunked response; otherwise an exact Content-Length
      if (kind !== 'truncate') headers['content-length'] = String(Buffer.byteLength(body));
      res.writeHead(reply.status, headers);
      this.rec.status = reply.status;
      this.unacked.push(0, this.count, 0);
      res.end(body, this.acked);
      const sock = res.socket as Socket | null;
      if (!sock || sock.writableLength === 0) {
        this.stamp(0, this.count, performance.now());
        this.unacked[this.unacked.length - 1] = 1;
      }
      this.close();
    };
    if (delay > 0) setTimeout(send, delay);
    else send();
  }
}
