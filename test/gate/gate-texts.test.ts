import { describe, expect, it } from 'vitest';
import { needsText, type GateCheck } from '../../src/gate/decide.js';
import { renderGateJunit, renderGateMarkdown, renderGateText, type GateReport } from '../../src/gate/index.js';
import { parseMaxRegression } from '../../src/gate/thresholds.js';
import { mismatchText, runMismatches } from '../../src/report/comparability.js';
import type { StoredRun } from '../../src/store/run-store.js';

/** Issue 51 item 10 (newcomer #11): the gate's rough edges, each read from what it prints. */

const check = (over: Partial<GateCheck>): GateCheck => ({
  metric: 'output_tps',
  row: 'concurrent@8',
  threshold: '-5%',
  limit: 0.05,
  baseline: 1000,
  candidate: 800,
  change: -0.2,
  low: -0.23,
  high: -0.17,
  verdict: 'fail',
  improved: false,
  evidence: '240 vs 240 requests, 1 vs 1 run',
  ...over,
});

const report = (checks: GateCheck[]): GateReport => ({
  verdict: 'fail',
  exitCode: 1,
  baseline: ['b0'],
  candidate: ['s0'],
  checks,
  skipped: [],
  unmatched: [],
  confidence: 0.95,
  resamples: 2000,
  seed: 1,
});

describe('gate texts', () => {
  it('"needs" gives each side its own run count when they differ', () => {
    const straddling = { bad: 0.03, badLow: 0.0, badHigh: 0.06, limit: 0.05 };
    expect(needsText(straddling, { requests: 100, baselineRuns: 2, candidateRuns: 1 })).toMatch(/^about \d+ runs per side \(now 2 baseline, 1 candidate\) would decide it$/);
    expect(needsText(straddling, { requests: 100, baselineRuns: 3, candidateRuns: 3 })).toBe('about 7 runs per side (now 3) would decide it');
    // One run a side whose interval is mostly run-to-run variation: more requests would not narrow it, runs would.
    expect(needsText(straddling, { requests: 100, baselineRuns: 1, candidateRuns: 1, runLevel: true })).toMatch(/^about \d+ runs per side \(now 1\) would decide it$/);
  });

  it('one minus sign (ASCII, as thresholds are typed) in the terminal, Markdown and JUnit', () => {
    const r = report([check({}), check({ metric: 'itl.p50', threshold: '+5%', baseline: 10, candidate: 8, change: -0.2, low: -0.22, high: -0.18, verdict: 'pass', improved: true })]);
    for (const text of [renderGateText(r), renderGateMarkdown(r), renderGateJunit(r)]) {
      expect(text).not.toContain('\u2212');
      expect(text).toContain('-20.0% [-23.0%, -17.0%]');
      expect(text).toContain('-5%');
    }
  });

  it('a window-rule mismatch shows where the two rules differ, not their common beginning twice', () => {
    const common = 'window: each row is measured over its steady window: it opens once the in-flight count has settled and closes';
    const fake = (id: string, windowRules: string): StoredRun =>
      ({
        id,
        summary: {
          layout: 'sweep',
          context: { model: 'Qwen2-7B-Instruct', engine: 'vllm', promptTokens: 128, outputTokens: 32 },
          target: { api: 'openai-chat', engine: 'vllm', model: 'Qwen2-7B-Instruct', simulated: false },
          profile: 'concurrent',
          workload: 'synthetic prompts of 128 tokens, 32 output tokens',
          windowRules,
          stages: [],
        },
      }) as unknown as StoredRun;
    const [m] = runMismatches([fake('e742eb96', `${common} after 60 s at most`), fake('c02c0b96', `${common} after 15 s at most`)]);
    expect(m?.field).toBe('window rules');
    const text = mismatchText(m as NonNullable<typeof m>);
    expect(text).toContain('after 60 s at most (run e742eb96)');
    expect(text).toContain('after 15 s at most (run c02c0b96)');
    // Still one short line per value.
    expect(text.length).toBeLessThan(200);
  });

  it('a threshold the wrong way round says what was given', () => {
    const p: string[] = [];
    parseMaxRegression('output_tps=+5%,ttft.p50=-10%,itl.p50=5', p);
    expect(p[0]).toBe('--max-regression output_tps=+5%: a regression of output_tps is a drop, e.g. -5% (you gave a positive percentage)');
    expect(p[1]).toBe('--max-regression ttft.p50=-10%: a regression of ttft.p50 is a rise, e.g. +10% (you gave a negative percentage)');
    expect(p[2]).toMatch(/itl\.p50 is a rise, e\.g\. \+10% \(you gave "5": write it as a percentage\)$/);
  });
});
