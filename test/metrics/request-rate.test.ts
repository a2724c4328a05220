import { describe, expect, it } from 'vitest';
import { windowRulesFor } from '../../src/load/profiles.js';
import type { StageSpec } from '../../src/load/types.js';
import { StageAccumulator } from '../../src/metrics/accumulator.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { summarizeStage } from '../../src/metrics/summary.js';
import { windowFigures } from '../../src/metrics/window-figures.js';

const TOKENS = 128;

/** A streamed success sent at `sent`: first token at `first`, the last (and its end) at `last`, TOKENS tokens. */
function rec(id: number, sent: number, first: number, last: number): RequestRecord {
  return {
    id, stage: 0, warmup: false, status: 'ok', scheduledAtMs: sent, sentAtMs: sent, dispatchLagMs: 0, clientQueueMs: 0,
    firstTokenAtMs: first, lastTokenAtMs: last, endAtMs: last, ttftMs: first - sent, e2eMs: last - sent, chunkGapsMs: [(last - first) / (TOKENS - 1)], chunks: TOKENS,
    requestedPromptTokens: 16, requestedOutputTokens: TOKENS, promptTokens: 16, outputTokens: TOKENS, tokenCountSource: 'server-usage',
    promptTokenSource: 'server-usage', clientPromptTokens: 16,
  };
}

/**
 * A constant 20 req/s row on a busy host: a request every 50 ms, its first token 100 ms after it is sent and its
 * last 1 s after. The host stalled for `stallMs` before `at`: the replies that finished meanwhile are handed over
 * together just after it, 0.01 ms apart (their last chunks with them).
 */
function busyHostRow(stall: { at: number; stallMs: number }): RequestRecord[] {
  const out: RequestRecord[] = [];
  for (let k = 0; k < 200; k++) {
    const sent = -3000 + 50 * k;
    let last = sent + 1000;
    if (last > stall.at - stall.stallMs && last <= stall.at) last = stall.at + 0.01 * out.filter((r) => r.endAtMs >= stall.at && r.endAtMs < stall.at + 1).length;
    out.push(rec(k, sent, sent + 100, last));
  }
  return out;
}

function summarize(records: RequestRecord[], openAtMs: number, closeAtMs: number) {
  const acc = new StageAccumulator();
  for (const r of records) acc.add(r);
  const spec = { kind: 'open', label: 'asynchronous@20.00 req/sec', rate: 20, arrival: 'constant', workload: {}, limits: { maxSeconds: 5 }, window: windowRulesFor('open', { maxSeconds: 5 }) } as unknown as StageSpec;
  const s = summarizeStage({ spec, index: 0, records: [], accumulator: acc, startedAtMs: -3000, endedAtMs: 8000, window: { openAtMs, closeAtMs }, interrupted: false });
  return { s, fig: windowFigures(acc, openAtMs, closeAtMs) };
}

describe('req/s over the window, as robust as output tok/s (issue 51 item 10)', () => {
  it('completions bunched just inside the window (a host stall before it opened) do not raise req/s: 20.00, as output tok/s / 128 says', () => {
    // The window opens on the first reply handed over after a 400-ms stall; 7 more come with it, inside the window,
    // though their streams ran before it. Counted whole: 107 completions in 5 s = 21.4 req/s (output tok/s exact).
    const { s, fig } = summarize(busyHostRow({ at: 0, stallMs: 400 }), 0, 5000);
    expect(fig.okCompletions).toBe(107);
    expect(s.outputTokenThroughput / TOKENS).toBeCloseTo(20, 1);
    expect(s.requestThroughput).toBeCloseTo(20, 1);
    expect(s.requestThroughput).toBeCloseTo(s.outputTokenThroughput / TOKENS, 1);
  });

  it('completions bunched after the close (a stall before it) do not lower it either', () => {
    // The replies that finished during a 400-ms stall before 5 s are handed over just after it, and the window closes
    // on the first: counted whole, 93 in 5 s = 18.6 req/s.
    const { s, fig } = summarize(busyHostRow({ at: 5000, stallMs: 400 }), 0, 5000.005);
    expect(fig.okCompletions).toBe(93);
    expect(s.requestThroughput).toBeCloseTo(20, 1);
    expect(s.requestThroughput).toBeCloseTo(s.outputTokenThroughput / TOKENS, 1);
  });

  it('a synchronous row still reads exactly 1 / latency (its window opens and closes on completions)', () => {
    // One at a time, 800 ms each (first token after 120 ms), sent as the last one ends.
    const records = Array.from({ length: 12 }, (_, i) => rec(i, 800 * i, 800 * i + 120, 800 * (i + 1)));
    const { s } = summarize(records, 1600, 8000);
    expect(s.requestThroughput).toBeCloseTo(8 / 6.4, 12);
  });
});
