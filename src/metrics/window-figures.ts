import type { StageAccumulator } from './accumulator.js';

/** Rates and counts of a row over one window of time [fromMs, toMs] (see load/window.ts for how it is chosen). */
export interface WindowFigures {
  lengthS: number;
  /** Successful completions inside the window. */
  okCompletions: number;
  /**
   * Successful requests done inside the window, counted as output tokens are: each request's one completion spread
   * over its stream (first → last token), the share of it inside the window — at its end for a reply with no token
   * times. The row's req/s: a whole count moves by one for a completion an instant either side of an edge, and
   * completions bunched at the window's close (a busy host delivering several at once) put 21.03 req/s on a row
   * sending 20 while its output tok/s was exact.
   */
  okRequestsDone: number;
  /** Completions of any outcome (ok or failed) inside the window. */
  completions: number;
  /** Requests sent inside the window. */
  sends: number;
  /** Output tokens generated inside the window (each request's tokens spread between its first and last token). */
  outputTokens: number;
  /** Prompt tokens of requests whose prefill finished (first token) inside the window. */
  promptTokens: number;
  /** Time-weighted mean of requests in flight over the window. */
  meanConcurrency: number;
  inFlightAtOpen: number;
  inFlightAtClose: number;
}

/** Counts every request the row sent, ramp-up included: a ramp request that finishes in the window is one of its completions. */
export function windowFigures(acc: StageAccumulator, fromMs: number, toMs: number): WindowFigures {
  const t = acc.timeline;
  const status = t.status.view();
  const sent = t.sent.view();
  const end = t.end.view();
  const first = t.firstToken.view();
  const last = t.lastToken.view();
  const out = t.outputTokens.view();
  const prompt = t.promptTokens.view();
  const inside = (x: number): boolean => x >= fromMs && x <= toMs;
  // A completion at the very instant the window opens belongs to the ramp: the window opens *on* a completion,
  // and in virtual time a whole batch can finish at that instant.
  const completedInside = (x: number): boolean => x > fromMs && x <= toMs;
  let okCompletions = 0;
  let okRequestsDone = 0;
  let completions = 0;
  let sends = 0;
  let outputTokens = 0;
  let promptTokens = 0;
  let busyMs = 0;
  let inFlightAtOpen = 0;
  let inFlightAtClose = 0;
  for (let i = 0; i < status.length; i++) {
    const s = sent[i] as number;
    const e = end[i] as number;
    const st = status[i] as number;
    if (inside(s)) sends++;
    if (s <= fromMs && e > fromMs) inFlightAtOpen++;
    if (s <= toMs && e > toMs) inFlightAtClose++;
    busyMs += Math.max(0, Math.min(e, toMs) - Math.max(s, fromMs));
    // A cut request did not complete: it stays in flight to the end of the row.
    if (st !== 2 && completedInside(e)) {
      completions++;
      if (st === 0) okCompletions++;
    }
    if (st !== 0) continue;
    const f = first[i] as number;
    const l = last[i] as number;
    const n = out[i] as number;
    if (Number.isNaN(f)) {
      // No token times (a non-streamed reply, an embeddings reply): its tokens, prompt and output, count when it completes.
      if (completedInside(e)) {
        outputTokens += n;
        promptTokens += prompt[i] as number;
        okRequestsDone += 1;
      }
      continue;
    }
    if (inside(f)) {
      outputTokens += 1;
      promptTokens += prompt[i] as number;
    }
    // The share of the stream inside the window; a stream of one instant counts where it ends (as its last token).
    const share = l > f ? Math.max(0, Math.min(l, toMs) - Math.max(f, fromMs)) / (l - f) : completedInside(Number.isNaN(l) ? e : l) ? 1 : 0;
    okRequestsDone += share;
    if (n > 1 && l > f) outputTokens += (n - 1) * share;
    else if (n > 1 && inside(l)) outputTokens += n - 1;
  }
  const lengthMs = Math.max(1e-6, toMs - fromMs);
  return {
    lengthS: lengthMs / 1000,
    okCompletions,
    okRequestsDone,
    completions,
    sends,
    outputTokens,
    promptTokens,
    meanConcurrency: busyMs / lengthMs,
    inFlightAtOpen,
    inFlightAtClose,
  };
}

/** A successful request sent in a window: its send time, TTFT and ITL (NaN when it has fewer than two output tokens). */
export interface SentRequestLatency {
  sent: number;
  ttft: number;
  itl: number;
}

/** The successful requests sent in [fromMs, toMs] that have a first token, in the timeline's order. */
export function sentRequestLatencies(acc: StageAccumulator, fromMs: number, toMs: number): SentRequestLatency[] {
  const t = acc.timeline;
  const status = t.status.view();
  const sent = t.sent.view();
  const first = t.firstToken.view();
  const last = t.lastToken.view();
  const out = t.outputTokens.view();
  const rows: SentRequestLatency[] = [];
  for (let i = 0; i < status.length; i++) {
    const s = sent[i] as number;
    const f = first[i] as number;
    if (status[i] !== 0 || s < fromMs || s > toMs || Number.isNaN(f)) continue;
    const n = out[i] as number;
    const l = last[i] as number;
    rows.push({ sent: s, ttft: f - s, itl: n > 1 && !Number.isNaN(l) ? (l - f) / (n - 1) : Number.NaN });
  }
  return rows;
}
