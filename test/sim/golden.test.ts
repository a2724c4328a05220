import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CALIBRATION } from '../../src/sim/calibrate/constants.js';
import { type SeedScenario, type StageSummary, seedScenarios, simulateScenario } from '../../src/sim/seed-compare.js';
import { parseSeedFile } from '../../src/sim/seeds.js';

/**
 * Golden test: the shipped calibration reproduces the seed figures it was fitted on (with the public tables).
 * Tolerances (median |error| per figure class, and a cap on the worst figure) are stated here and in the
 * calibration report; they are in-sample figures, leave-one-config-out errors are reported by fit.ts --loto.
 */
const TOLERANCE: Record<string, { median: number; max: number }> = {
  'sync TTFT': { median: 15, max: 60 },
  // Seed 003's vLLM rows run 9–26% slow at one request: vLLM V0's per-step host time is shared with T19's 0.5.4 bursts.
  'sync ITL': { median: 20, max: 40 },
  // The worst is seed 003's Qwen2-MoE-57B on 2× A100 (+57%): vLLM V0's MoE constants also serve T10/T11/T19's MoE rows.
  'saturated output tok/s': { median: 25, max: 60 },
  'grid throughput': { median: 15, max: 60 },
  'grid latency/output token': { median: 10, max: 50 },
};

/** The published tables ship in the repository (data/seeds/README.md), so the test runs on a fresh clone. */
const seedsDir = fileURLToPath(new URL('../../data/seeds', import.meta.url));

function classOf(table: string, row: string, metric: string): string {
  if (row === 'synchronous') return metric === 'TTFT' ? 'sync TTFT' : 'sync ITL';
  if (row === 'throughput') return 'saturated output tok/s';
  return metric === 'latency/output token' ? 'grid latency/output token' : 'grid throughput';
}

/**
 * The fitted figures of every scenario under the shipped calibration, each scenario simulated once: the figures
 * predictFitPoints (calibrate/fit.ts) gives on a scenario's first use, which are its simulation's (the same 143 values,
 * bit for bit), without recording and checking a replay trace the fit would re-price later (half the CPU). The
 * evaluator's first use equalling the simulation is test/sim-fit.test.ts's.
 */
function fittedFigures(scenarios: SeedScenario[]): Array<{ table: string; row: string; metric: string; published: number; predicted: number }> {
  return scenarios.flatMap((sc) => {
    const metrics = sc.metrics.filter((m) => m.role === 'fit');
    if (!metrics.length) return [];
    let s: StageSummary | undefined;
    try {
      s = simulateScenario({ ...sc, engine: { ...sc.engine, calibration: DEFAULT_CALIBRATION } });
    } catch {
      s = undefined;
    }
    return metrics.map((m) => ({ table: sc.table, row: sc.row, metric: m.metric, published: m.published, predicted: s ? m.pick(s) : NaN }));
  });
}

describe('golden: seed figures', () => {
  // Deterministic but CPU-bound (every seed scenario simulated): 10–20 s alone.
  it('reproduces synchronous TTFT/ITL, saturated throughput and grid figures within tolerance', { timeout: 300_000 }, () => {
    const files = readdirSync(seedsDir).filter((f) => f.endsWith('.txt'));
    const points = fittedFigures(seedScenarios(files.flatMap((f) => parseSeedFile(`${seedsDir}/${f}`))));
    const errs = new Map<string, number[]>();
    for (const p of points) {
      const c = classOf(p.table, p.row, p.metric);
      errs.set(c, [...(errs.get(c) ?? []), Math.abs(p.predicted / p.published - 1) * 100]);
    }
    const summary: Record<string, { n: number; median: number; max: number }> = {};
    for (const [c, e] of errs) {
      e.sort((a, b) => a - b);
      summary[c] = { n: e.length, median: e[Math.floor(e.length / 2)] as number, max: e[e.length - 1] as number };
    }
    expect(Object.keys(summary).sort()).toEqual(Object.keys(TOLERANCE).sort());
    for (const [c, s] of Object.entries(summary)) {
      const tol = TOLERANCE[c] as { median: number; max: number };
      expect.soft(s.median, `${c} median |err| (n=${s.n})`).toBeLessThanOrEqual(tol.median);
      expect.soft(s.max, `${c} max |err|`).toBeLessThanOrEqual(tol.max);
    }
  });
});
