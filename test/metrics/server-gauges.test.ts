import { describe, expect, it } from 'vitest';
import { telemetryObserver } from '../../src/cli/run-observers.js';
import { combinedReplicaSamples, windowGauges } from '../../src/metrics/server-gauges.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import { serverCell } from '../../src/report/layouts.js';
import { summarizeSamples, type ServerSample } from '../../src/transport/prometheus.js';
import type { TelemetrySampler } from '../../src/transport/telemetry.js';

/**
 * Issue 51 item 6: a row's server gauges describe its measured window — not the throughput row's cap search before
 * it — and running / waiting are one moment's, never two maxima from different moments shown as one state.
 */

/** A sampler that has already read these samples for row 0 (what TelemetrySampler keeps; no HTTP needed). */
function samplerOf(samples: ServerSample[]): TelemetrySampler {
  return {
    hasGauges: false,
    setStage: () => undefined,
    summarize: () => summarizeSamples(samples),
    samplesOf: () => samples,
    series: () => samples.map((s) => ({ ...s, stage: 0 })),
  } as unknown as TelemetrySampler;
}

/** The row after the telemetry observer has added the server's gauges (as `run` does after each row). */
function rowWith(samples: ServerSample[], window: { fromMs: number; toMs: number }): StageSummary {
  const row = { index: 0, label: 'throughput', metrics: {}, requests: { ok: 1 }, window: { rule: 'steady', startS: 0, lengthS: 1, ...window } } as unknown as StageSummary;
  telemetryObserver(samplerOf(samples), { sharesPrefixes: false } as never).onStageEnd?.(row, {} as never);
  return row;
}

describe('server gauges over the measured window', () => {
  // The default run's throughput row: the cap search reached 256 running + 196 waiting at ~30 s; the window
  // (57.2–68.7 s) held 16–18 running and at most 5 waiting.
  const search: ServerSample[] = [
    { atMs: 29_500, running: 64, waiting: 0, kvUsage: 0.05 },
    { atMs: 30_000, running: 256, waiting: 196, kvUsage: 0.15 },
    { atMs: 30_500, running: 256, waiting: 150, kvUsage: 0.15 },
  ];
  const window: ServerSample[] = [
    { atMs: 57_500, running: 16, waiting: 2, kvUsage: 0.03 },
    { atMs: 60_000, running: 18, waiting: 5, kvUsage: 0.04 },
    { atMs: 63_000, running: 17, waiting: 1, kvUsage: 0.05 },
    { atMs: 68_500, running: 16, waiting: 0, kvUsage: 0.03 },
  ];

  it('the throughput row shows what its window held, not the cap search (was 256 / 196 / 15%)', () => {
    const row = rowWith([...search, ...window], { fromMs: 57_200, toMs: 68_700 });
    expect(serverCell(row)).toBe('18 / 5 / 5%');
    expect(row.server?.window).toMatchObject({ samples: 4, peakRunningPlusWaiting: 23, runningAtPeak: 18, waitingAtPeak: 5, peakKvUsage: 0.05 });
    expect(row.server?.window?.meanRunning).toBeCloseTo(16.75, 10);
    expect(row.server?.window?.meanWaiting).toBeCloseTo(2, 10);
    // The whole row's peaks keep their meaning (summary.json's existing fields).
    expect(row.server).toMatchObject({ peakRunning: 256, peakWaiting: 196, peakKvUsage: 0.15 });
  });

  it('running and waiting come from one reading: 8 requests never read as 8 running + 4 waiting', () => {
    // concurrent@8: full batch at one moment, half queued at another; the two maxima (8 / 4) never happened together.
    const row = rowWith(
      [
        { atMs: 100, running: 8, waiting: 0 },
        { atMs: 600, running: 4, waiting: 3 },
        { atMs: 1100, running: 3, waiting: 4 },
      ],
      { fromMs: 0, toMs: 2000 },
    );
    expect(serverCell(row)).toBe('8 / 0 / —');
  });

  it('a window with fewer than two readings says nothing (—); edge readings (an idle server) are not in it', () => {
    const g = windowGauges([{ atMs: 10, running: 0, waiting: 0, edge: true }, { atMs: 20, running: 3, waiting: 1 }, { atMs: 30, running: 0, edge: true }], 0, 100);
    expect(g.samples).toBe(1);
    const row = rowWith([{ atMs: 10, running: 9, waiting: 9 }, { atMs: 20, running: 3, waiting: 1 }, { atMs: 500, running: 9, waiting: 9 }], { fromMs: 15, toMs: 400 });
    expect(serverCell(row)).toBe('—');
  });

  it("several replicas' readings add up moment by moment (each one's reading nearest in time), KV the fullest replica's", () => {
    // Both samplers tick every 500 ms, replica 1 10 ms after replica 0. The concurrent@8 round-robin run summed each
    // replica's *latest* reading instead: 3 of one moment + 7 of half a second later read 9 for 8 requests.
    const combined = combinedReplicaSamples([
      [{ atMs: 100, running: 2, waiting: 3, kvUsage: 0.2 }, { atMs: 600, running: 3, waiting: 0, kvUsage: 0.3 }, { atMs: 1100, running: 1, waiting: 0 }],
      [{ atMs: 110, running: 2, waiting: 0, kvUsage: 0.1 }, { atMs: 610, running: 5, waiting: 0, kvUsage: 0.1 }, { atMs: 1500, running: 7, waiting: 0 }],
    ]);
    expect(combined).toEqual([
      { atMs: 100, running: 4, waiting: 3, kvUsage: 0.2 },
      { atMs: 110, running: 4, waiting: 3, kvUsage: 0.2 },
      { atMs: 600, running: 8, waiting: 0, kvUsage: 0.3 },
      { atMs: 610, running: 8, waiting: 0, kvUsage: 0.3 },
      // 1100 and 1500: no reading of the other replica within a quarter second — not one moment, left out.
    ]);
  });
});
