import { describe, expect, it } from 'vitest';
import type { CapacityResult } from '../../src/load/capacity-types.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import { headlineOf } from '../../src/matrix/headline.js';
import type { RunSummaryDoc } from '../../src/results/run-summary.js';
import { buildCompareBundle } from '../../src/report/bundles.js';
import { compareNoteLines, compareSections } from '../../src/report/compare.js';
import { computeVerdict, meetsSlo, sloText } from '../../src/report/verdict.js';
import type { StoredRun } from '../../src/store/run-store.js';

/**
 * Issue 51 items 7 and 12(f): compare's verdict and Δ columns at matched load. In-memory runs of known rows:
 * closed loops match at the same concurrency (as `gate` matches them), a curve whose req/s does not rise with its
 * load is not read between its rows, and an SLO is stated as it was given.
 */

interface Row {
  /** Closed loop: streams; open loop: `rate`. */
  streams?: number;
  rate?: number;
  rps: number;
  ttft: number;
  itl: number;
  /** TTFT p99, when not 1.5 × the mean. */
  ttftP99?: number;
  /** With an SLO: the share of the row's requests that met it, and the limits it was counted against. */
  attainment?: number;
  label?: string;
}

const stats = (mean: number, p99 = mean * 1.5) => ({ count: 200, mean, median: mean, p90: mean * 1.2, p95: mean * 1.3, p99, min: mean / 2, max: mean * 2, stddev: mean * 0.05 });

function stage(index: number, r: Row, slo?: { ttftMs: number }): StageSummary {
  const closed = r.streams !== undefined;
  return {
    index,
    label: r.label ?? (closed ? (r.streams === 1 ? 'synchronous' : `concurrent@${r.streams}`) : `asynchronous@${r.rate?.toFixed(2)} req/sec`),
    kind: closed ? 'closed' : 'open',
    ...(closed ? { concurrency: r.streams } : { targetRate: r.rate }),
    durationS: 30,
    requests: { total: 200, ok: 200, errors: 0, incomplete: 0, warmup: 0 },
    errorsByCode: {},
    failureShare: 0,
    requestThroughput: r.rps,
    outputTokenThroughput: r.rps * 64,
    promptTokenThroughput: r.rps * 128,
    totalTokenThroughput: r.rps * 192,
    sendRate: r.rps,
    belowTarget: false,
    meanConcurrency: r.streams ?? 1,
    metrics: { ttftMs: stats(r.ttft, r.ttftP99), itlMs: stats(r.itl), e2eMs: stats(r.ttft + 63 * r.itl), outputTokens: { ...stats(64), stddev: 0 }, promptTokens: { ...stats(128), stddev: 0 } },
    outputLengthMismatches: 0,
    promptLengthMismatches: 0,
    tokenCountSources: {},
    ...(r.attainment !== undefined && slo ? { sloAttainment: { percent: r.attainment, met: 2 * r.attainment, of: 200 }, goodput: { slo, requestsPerS: r.rps, good: 2 * r.attainment } } : {}),
    interrupted: false,
  } as StageSummary;
}

function run(id: string, rows: Row[], opts: { profile?: string; capacity?: Partial<CapacityResult>; slo?: { ttftMs: number } } = {}): StoredRun {
  return {
    id,
    name: id,
    dir: `/nonexistent/${id}`,
    schemaVersion: 1,
    warnings: [],
    summary: {
      tool: { name: 'inferbench', version: 'test' },
      runId: id,
      createdAt: '2026-12-07T00:00:00Z',
      layout: 'sweep',
      context: { model: 'tiny-llama', engine: 'llamacpp', label: id, promptTokens: 128, outputTokens: 64 },
      target: { api: 'openai-completions', engine: 'llamacpp', model: 'tiny-llama', simulated: false },
      profile: opts.profile ?? 'concurrent',
      workload: 'synthetic prompts of 128 tokens, 64 output tokens',
      windowRules: 'steady window',
      stages: rows.map((r, i) => stage(i, r, opts.slo)),
      ...(opts.capacity ? { capacity: opts.capacity as CapacityResult } : {}),
      interrupted: false,
      notes: [],
    },
  } as unknown as StoredRun;
}

describe('compare of closed-loop rows: matched at the same concurrency', () => {
  // Two runs at concurrent@8 that achieved different req/s (the newcomer's b0 and s0): no common rate exists.
  const a = run('b0', [{ streams: 8, rps: 10, ttft: 100, itl: 20 }]);
  const b = run('s0', [{ streams: 8, rps: 8, ttft: 125, itl: 25 }]);

  it('the verdict compares TTFT and ITL at concurrency 8, row against row', () => {
    const v = computeVerdict([a, b], ['b0', 's0'], {});
    expect(v.commonConcurrency).toBe(8);
    expect(v.table.headers).toContain('TTFT mean @ concurrency 8');
    expect(v.table.headers).toContain('ITL mean @ concurrency 8');
    expect(v.table.rows.map((r) => r.slice(2, 4))).toEqual([
      ['100.00 ms', '20.00 ms'],
      ['125.00 ms', '25.00 ms'],
    ]);
    expect(v.lines).toContain('At concurrency 8 (the highest every run measured, rows matched directly): lowest TTFT b0 (100.00 ms vs 125.00 ms).');
    expect(v.lines).toContain('At concurrency 8: lowest ITL b0 (20.00 ms vs 25.00 ms).');
    expect(v.figures[1]).toMatchObject({ matchedConcurrency: 8, ttftMeanMsAtMatchedConcurrency: 125, itlMeanMsAtMatchedConcurrency: 25 });
  });

  it('the Δ columns compare the rows of the same concurrency', () => {
    const [, second] = compareSections([a, b], ['b0', 's0']);
    const t = second?.table;
    expect(t?.headers.slice(-2)).toEqual(['Δ TTFT vs 1st @ same concurrency', 'Δ ITL vs 1st @ same concurrency']);
    expect(t?.rows[0]?.slice(-2)).toEqual(['+25.0%', '+25.0%']);
  });

  it('the report (terminal, dashboard and matrix share it) has no "no common rate" and no empty Δ', () => {
    const md = buildCompareBundle([a, b], {}, 'test').markdown;
    expect(md).not.toMatch(/no common (rate|load)/);
    expect(md).toMatch(/TTFT mean @ concurrency 8/);
  });
});

describe('curves whose req/s does not rise with their load are not read between rows', () => {
  // The report's matrix: llama.cpp with 1, 2 and 4 slots, probed at 1… streams (capacity, concurrency axis).
  // parallel=2 went 0.75, 0.74, 0.65 req/s at 2, 3, 4 streams: its TTFT at ~0.73 req/s is not a figure.
  const cap = (probes: number[]): Partial<CapacityResult> => ({ axis: 'concurrency', unit: 'streams', attainment: 90, slo: { ttftMs: 600 }, probes: [], feasibleMax: Math.max(...probes), firstBreach: null, precision: 1, maxErrorShare: 0.01, fitted: [], verdict: '' });
  const p1 = run('parallel=1', [{ streams: 1, rps: 0.66, ttft: 60, itl: 5 }, { streams: 2, rps: 0.73, ttft: 700, itl: 5 }], { profile: 'capacity', capacity: cap([1]) });
  const p2 = run('parallel=2', [{ streams: 1, rps: 0.66, ttft: 61, itl: 5 }, { streams: 2, rps: 0.75, ttft: 120, itl: 9 }, { streams: 3, rps: 0.74, ttft: 900, itl: 9 }, { streams: 4, rps: 0.65, ttft: 2400, itl: 9 }], { profile: 'capacity', capacity: cap([2]) });

  it('closed loops every run measured at 2 streams are matched there, not interpolated into queued rows', () => {
    const v = computeVerdict([p1, p2], ['parallel=1', 'parallel=2'], {});
    expect(v.commonConcurrency).toBe(2);
    expect(v.commonRate).toBeUndefined();
    expect(v.figures.map((f) => f['ttftMeanMsAtMatchedConcurrency'])).toEqual([700, 120]);
  });

  it('read at a common rate, a run whose closed-loop req/s falls as streams are added is left out, and the verdict says so', () => {
    // A sweep (synchronous and open-loop rows) beside the queued closed loop plus one open-loop row: no common concurrency.
    const sweep = run('sweep', [{ streams: 1, rps: 0.6, ttft: 60, itl: 5 }, { rate: 0.7, rps: 0.7, ttft: 70, itl: 5 }, { rate: 0.8, rps: 0.8, ttft: 80, itl: 5 }], { profile: 'sweep' });
    const queued = run('queued', [...p2.summary.stages.map((s) => ({ streams: s.concurrency, rps: s.requestThroughput, ttft: s.metrics.ttftMs?.mean ?? 0, itl: 9 })), { rate: 0.7, rps: 0.69, ttft: 300, itl: 9 }], { profile: 'sweep' });
    const v = computeVerdict([sweep, queued], ['sweep', 'queued'], {});
    expect(v.commonRate).toBeCloseTo(0.75);
    expect(v.figures[1]?.['ttftMeanMsAtCommonRate']).toBeNull();
    expect(v.figures[0]?.['ttftMeanMsAtCommonRate']).toBeCloseTo(75);
    expect(v.lines.join('\n')).toMatch(/queued: req\/s does not rise with its load .* not read at 0\.75 req\/s/);
    // The Δ columns against it as the first run: rows with no row of the same concurrency there get none.
    const sections = compareSections([queued, sweep], ['queued', 'sweep']);
    const rows = sections[1]?.table.rows ?? [];
    expect(rows.map((r) => r.slice(-2))).toEqual([['-1.6%', '-44.4%'], ['—', '—'], ['—', '—']]);
    expect(compareNoteLines(sections).legend.join('\n')).toMatch(/The first run's req\/s does not rise with its load/);
  });
});

describe('an SLO with an attainment is stated as it was given', () => {
  const slo = { ttftMs: 600 };
  const caps = (feasibleMax: number): Partial<CapacityResult> => ({ axis: 'concurrency', unit: 'streams', attainment: 90, slo, probes: [], feasibleMax, firstBreach: feasibleMax + 1, precision: 1, maxErrorShare: 0.01, fitted: [], verdict: '' });
  // Every row's p99 is far above 600 ms (a request that finds no free slot waits a whole generation), while 96% of
  // the requests of the rows within the capacity met the limit: the 90% SLO holds there, a p99 one nowhere.
  const row = (streams: number, rps: number, attainment: number): Row => ({ streams, rps, ttft: 300, ttftP99: 1500, itl: 9, attainment });
  const two = run('parallel=2', [row(1, 0.66, 96), row(2, 0.75, 96), row(3, 0.74, 52.9)], { profile: 'capacity', capacity: caps(2), slo });
  const four = run('parallel=4', [row(1, 0.66, 96), row(2, 0.9, 96), row(4, 1.1, 96), row(5, 1.15, 76.2)], { profile: 'capacity', capacity: caps(4), slo });

  it('"90% of requests TTFT ≤ 600 ms", and rows are judged by that share, not by p99', () => {
    expect(sloText(slo, 90)).toBe('90% of requests TTFT ≤ 600 ms');
    expect(sloText(slo)).toBe('TTFT p99 ≤ 600 ms');
    const met = two.summary.stages[1] as StageSummary;
    const missed = two.summary.stages[2] as StageSummary;
    expect([meetsSlo(met, slo), meetsSlo(met, slo, 90), meetsSlo(missed, slo, 90)]).toEqual([false, true, false]);
    const v = computeVerdict([two, four], ['parallel=2', 'parallel=4'], { slo });
    expect(v.sloText).toBe('90% of requests TTFT ≤ 600 ms');
    expect(v.lines.join('\n')).toContain('Highest load within the SLO (90% of requests TTFT ≤ 600 ms): parallel=4 at 1.10 req/s (next: parallel=2 at 0.75)');
    expect(v.lines.join('\n')).not.toMatch(/p99 ≤ 600/);
    const md = buildCompareBundle([two, four], { slo }, 'test').markdown;
    expect(md).toContain('## Verdict at matched load (SLO: 90% of requests TTFT ≤ 600 ms, no failed request)');
  });
});

describe('a capacity cell\'s headline comes from a probe that met its SLO', () => {
  it('the busiest probe within the SLO, not a faster one past the capacity; none within it: marked', () => {
    const probes = (passes: boolean[]) => passes.map((pass, i) => ({ stage: i, load: [1, 2, 4, 6][i] as number, attainment: pass ? 100 : 57.1, requests: 20, errorShare: 0, pass }));
    const rows: Row[] = [
      { streams: 1, rps: 0.66, ttft: 60, itl: 5 },
      { streams: 2, rps: 0.9, ttft: 70, itl: 8 },
      { streams: 4, rps: 1.0, ttft: 90, itl: 14 },
      { streams: 6, rps: 1.19, ttft: 1962, itl: 14 },
    ];
    const doc = (passes: boolean[]): RunSummaryDoc =>
      run('parallel=4', rows, { profile: 'capacity', capacity: { axis: 'concurrency', unit: 'streams', feasibleMax: passes.lastIndexOf(true) >= 0 ? [1, 2, 4, 6][passes.lastIndexOf(true)] as number : null, probes: probes(passes), precision: 1, verdict: '' } }).summary as unknown as RunSummaryDoc;
    const h = headlineOf(doc([true, true, true, false]));
    expect(h).toMatchObject({ requestThroughput: 1.0, ttftMedianMs: 90, row: 'concurrent@4', withinSlo: true });
    expect(headlineOf(doc([false, false, false, false]))).toMatchObject({ requestThroughput: 1.19, row: 'concurrent@6', withinSlo: false });
  });
});
