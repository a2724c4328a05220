import { describe, expect, it } from 'vitest';
import { windowRulesFor } from '../../src/load/profiles.js';
import type { StageSpec } from '../../src/load/types.js';
import type { WindowOutcome } from '../../src/load/window.js';
import { StageAccumulator } from '../../src/metrics/accumulator.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { steadyWarnings, summarizeStage, type StageSummary } from '../../src/metrics/summary.js';
import { rowMarks } from '../../src/report/layouts.js';
import { rowNoteLines } from '../../src/report/row-notes.js';

/** A successful streamed request: sent at `sent`, first token `ttft` later, then `tokens` − 1 more every `itl` ms. */
function rec(id: number, sent: number, ttft: number, itl = 50, tokens = 10): RequestRecord {
  const first = sent + ttft;
  const last = first + itl * (tokens - 1);
  return {
    id, stage: 0, warmup: false, status: 'ok', scheduledAtMs: sent, sentAtMs: sent, dispatchLagMs: 0, clientQueueMs: 0,
    firstTokenAtMs: first, lastTokenAtMs: last, endAtMs: last, ttftMs: ttft, e2eMs: last - sent, chunkGapsMs: Array.from({ length: tokens - 1 }, () => itl), chunks: tokens,
    requestedPromptTokens: 16, requestedOutputTokens: tokens, promptTokens: 16, outputTokens: tokens, tokenCountSource: 'server-usage',
    promptTokenSource: 'server-usage', clientPromptTokens: 16,
  };
}

function row(spec: Partial<StageSpec> & { kind: StageSpec['kind']; label: string }, records: RequestRecord[], window: WindowOutcome): StageSummary {
  const acc = new StageAccumulator();
  for (const r of records) acc.add(r);
  const full = { workload: {}, limits: { maxSeconds: 5 }, window: windowRulesFor(spec.kind, { maxSeconds: 5 }), ...spec } as unknown as StageSpec;
  return summarizeStage({ spec: full, index: 0, records: [], accumulator: acc, startedAtMs: 0, endedAtMs: (window.closeAtMs ?? 0) + 10_000, window, interrupted: false });
}

const openRow = (rate: number): Partial<StageSpec> & { kind: 'open'; label: string } =>
  ({ kind: 'open', label: `asynchronous@${rate.toFixed(2)} req/sec`, rate, arrival: 'constant' }) as unknown as Partial<StageSpec> & { kind: 'open'; label: string };

describe('issue 36 item 11: rows that cannot describe their load say so', () => {
  it('(a) a throughput row whose window held a deeper queue than its cap is marked ~ and its note prints both', () => {
    const records = Array.from({ length: 30 }, (_, i) => rec(i, 100 * i, 200));
    const search = { cap: 16, steps: [{ cap: 16, completionRate: 0.95 }, { cap: 64, completionRate: 0.71 }], measuredInFlight: { mean: 34.4, max: 60 } };
    const s = row({ kind: 'burst', label: 'throughput' }, records, { openAtMs: 0, closeAtMs: 5000, capSearch: search });
    expect(rowMarks(s)).toBe('throughput ~');
    const notes = rowNoteLines([s]);
    expect(notes).toContain('~ throughput: the window held 34.4 requests in flight on average (at most 60), not the 16 its cap search kept: its figures describe that load');
    expect(notes.find((l) => l.startsWith('throughput: kept 16'))).toMatch(/the window measured 34\.4 in flight on average, at most 60 .*not the cap/);
    // The cap the window held: no mark.
    const held = row({ kind: 'burst', label: 'throughput' }, records, { openAtMs: 0, closeAtMs: 5000, capSearch: { ...search, measuredInFlight: { mean: 15.6, max: 16 } } });
    expect(rowMarks(held)).toBe('throughput');
    expect(rowNoteLines([held]).find((l) => l.startsWith('throughput: kept 16'))).toMatch(/^throughput: kept 16 requests in flight; the window measured 15\.6 in flight on average, at most 16 \(searched/);
  });

  it('a throughput row that kept a cap the server queued (4 in flight lost rate) is marked ~: its TTFT and latency include the wait', () => {
    const records = Array.from({ length: 30 }, (_, i) => rec(i, 100 * i, 200));
    const search = { cap: 16, steps: [{ cap: 16, completionRate: 0.79, queued: true, servingAtOnce: 4 }, { cap: 4, completionRate: 0.6 }], measuredInFlight: { mean: 15.9, max: 16 } };
    const s = row({ kind: 'burst', label: 'throughput' }, records, { openAtMs: 0, closeAtMs: 5000, capSearch: search });
    expect(rowMarks(s)).toBe('throughput ~');
    expect(rowNoteLines([s])).toContain('~ throughput: its 16 in flight queued at the server, which served 4 at once (4 in flight lost throughput): time to first token and latency include the wait of the other 12');
    // Settled at the 4 the server served at once: no mark.
    const settled = row({ kind: 'burst', label: 'throughput' }, records, { openAtMs: 0, closeAtMs: 5000, capSearch: { ...search, cap: 4, steps: [search.steps[0]!, { cap: 4, completionRate: 0.78 }], measuredInFlight: { mean: 4, max: 4 } } });
    expect(rowMarks(settled)).toBe('throughput');
  });

  it('(b) a time-limited row with fewer than 20 requests names what it held and the --max-seconds that would gather enough', () => {
    // 0.30 req/s for a 15-s window (5 s kept open 3×): 5 requests.
    const records = Array.from({ length: 5 }, (_, i) => rec(i, 3000 * i + 1, 700, 40));
    const s = row(openRow(0.3), records, { openAtMs: 0, closeAtMs: 15_000 });
    expect(s.belowTarget).toBe(false);
    expect(s.fewRequests).toEqual({ held: 5, min: 20, suggestedMaxSeconds: Math.ceil(25 / (3 * (5 / 15))), extendFactor: 3 });
    const line = rowNoteLines([s]).find((l) => l.startsWith('too few requests'));
    // Issue 51 item 9: the hint says how long windows then stretch, or "--max-seconds 25" after a 15-s window reads wrong.
    expect(line).toBe('too few requests to describe the load: asynchronous@0.30 req/sec held 5 requests (min 20) in its 15.0-s window (±0.07 req/s per request): --max-seconds 25 would hold 20 (windows then stretch up to 75 s)');
    // A sweep row, whose window could stay open 120 s for them: at 0.13 req/s, 20 take 150 s. It says why it held too few.
    const sweepRow = { kind: 'open', label: 'asynchronous@0.13 req/sec', rate: 2 / 15, arrival: 'constant', window: windowRulesFor('open', { maxSeconds: 5 }, { sizedToSamples: true }) };
    const sparse = [rec(0, 1, 700, 40), rec(1, 7501, 700, 40)];
    const sized = row(sweepRow as unknown as Partial<StageSpec> & { kind: 'open'; label: string }, sparse, { openAtMs: 0, closeAtMs: 15_000 });
    expect(sized.fewRequests).toMatchObject({ held: 2, sizedLimitS: 120, suggestedMaxSeconds: 63 });
    expect(rowNoteLines([sized]).find((l) => l.startsWith('too few requests'))).toBe(
      'too few requests to describe the load: asynchronous@0.13 req/sec held 2 requests (min 20) in its 15.0-s window (±0.07 req/s per request), ' +
        '20 at its rate taking longer than the 120 s a sweep keeps a window open for them: --max-seconds 63 would hold 20 (windows then stretch up to 189 s)',
    );
    // Sized, and 20 would fit in 120 s at its rate (0.33 req/s): no such reason.
    const fits = row({ ...sweepRow, label: 'asynchronous@0.30 req/sec', rate: 0.3 } as unknown as Partial<StageSpec> & { kind: 'open'; label: string }, records, { openAtMs: 0, closeAtMs: 15_000 });
    expect(fits.fewRequests?.sizedLimitS).toBeUndefined();
    // Enough requests: nothing to say.
    const many = row(openRow(2), Array.from({ length: 30 }, (_, i) => rec(i, 500 * i + 1, 700, 40)), { openAtMs: 0, closeAtMs: 15_000 });
    expect(many.fewRequests).toBeUndefined();
    expect(rowNoteLines([many]).some((l) => l.startsWith('too few'))).toBe(false);
  });

  it('(e) a row whose server slowed down in its first part and recovered is marked ~ (not steady), with a note', () => {
    // 1 req/s for 12 s: the first three requests waited ~8.8 s for their first token, the rest ~0.7 s (it kept up).
    const ttft = [8800, 8500, 7900, 2500, 800, 720, 700, 690, 710, 705, 698, 702];
    const s = row(openRow(1), ttft.map((t, i) => rec(i, 1000 * i + 1, t, 40)), { openAtMs: 0, closeAtMs: 12_000 });
    expect(s.belowTarget).toBe(false);
    expect(rowMarks(s)).toBe('asynchronous@1.00 req/sec ~');
    expect(rowNoteLines([s]).join('\n')).toMatch(/~ asynchronous@1\.00 req\/sec: latency changed within the row \(median TTFT 8500 ms in its first quarter of requests against 702 ms in its last/);
    // Noisy but steady (slow and quick requests all through the row): no mark.
    const noisy = row(openRow(1), ttft.map((_, i) => rec(i, 1000 * i + 1, i % 2 ? 2400 : 700, 40)), { openAtMs: 0, closeAtMs: 12_000 });
    expect(rowMarks(noisy)).toBe('asynchronous@1.00 req/sec');
    // More streams than slots: quick and queued requests all through the row. Its first two and last two requests
    // happen to fall in different modes (3.4×, no overlap) — ρ 0.24, but there is no trend through the row: no mark.
    const modes = [700, 700, 2400, 2400, 2400, 700, 700, 700, 2400, 2400];
    const bimodal = row({ kind: 'closed', label: 'concurrent@8', concurrency: 8 } as unknown as Partial<StageSpec> & { kind: 'closed'; label: string },
      modes.map((t, i) => rec(i, 1000 * i + 1, t, 40)), { openAtMs: 0, closeAtMs: 12_000 });
    expect((bimodal.steadyWarnings ?? []).filter((w) => w.includes('latency changed'))).toEqual([]);
    expect(rowMarks(bimodal)).toBe('concurrent@8');
  });
});

describe('a window shorter than one request\'s lifetime', () => {
  const row = (medianMs: number, durationS: number): StageSummary =>
    ({ metrics: { e2eMs: { median: medianMs } }, durationS, requests: { ok: 257 } }) as unknown as StageSummary;
  const lifetime = (s: StageSummary): string | undefined => steadyWarnings(s, false).find((w) => w.includes("one request's lifetime"));

  it('is not flagged when the median request is as long as the window (the default sweep\'s throughput row: 11.4 s both)', () => {
    expect(lifetime(row(11_420, 11.4))).toBeUndefined();
    expect(lifetime(row(12_400, 11.4))).toBeUndefined();
  });

  it('is flagged, with the --max-seconds that would hold it, when requests take clearly longer', () => {
    expect(lifetime(row(13_000, 11.4))).toBe(
      "requests took 13.0 s (median), longer than the 11.4-s window: the window holds less than one request's lifetime, so the load may not have settled in it; raise --max-seconds to 26 or more",
    );
  });
});
