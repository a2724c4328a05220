import type { CapacityResult } from '../results/capacity.js';
import type { StoredRun } from '../store/run-store.js';
import { classify, type GateCheck } from './decide.js';
import { thresholdText, type Threshold } from './thresholds.js';

/**
 * Capacity runs (`--profile capacity`): the answer is a load bracket, not a sample — the highest load that met the
 * SLO (`feasibleMax`) and the lowest above it that failed (`firstBreach`), so the capacity lies in between. Over
 * several runs a side's bracket is the widest of them (lowest feasibleMax to highest firstBreach). The ratio's
 * interval is candidate bracket / baseline bracket at its extremes; the point is the ratio of the mean answers.
 */
interface Bracket {
  answer: number;
  low: number;
  high: number;
  precision: number;
  unit: string;
}

function bracketOf(runs: readonly StoredRun[]): Bracket | undefined {
  const caps = runs.map((r) => r.summary.capacity).filter((c): c is CapacityResult => c !== undefined);
  if (caps.length !== runs.length || caps.some((c) => c.feasibleMax === null)) return undefined;
  const fm = caps.map((c) => c.feasibleMax as number);
  // No failure above the answer: the search hit its ceiling, the capacity is at least feasibleMax (kept as the top).
  const top = caps.map((c) => c.firstBreach ?? (c.feasibleMax as number));
  return {
    answer: fm.reduce((a, b) => a + b, 0) / fm.length,
    low: Math.min(...fm),
    high: Math.max(...top),
    precision: Math.max(...caps.map((c) => c.precision)),
    unit: caps[0]?.unit ?? 'req/s',
  };
}

export function decideCapacity(baseline: readonly StoredRun[], candidate: readonly StoredRun[], t: Threshold): { check?: GateCheck; skipped?: string } {
  if (!baseline.some((r) => r.summary.capacity) && !candidate.some((r) => r.summary.capacity)) return {};
  const b = bracketOf(baseline);
  const c = bracketOf(candidate);
  if (!b || !c) return { skipped: 'capacity: every run of both sides must be a capacity run with an answer (a load that met the SLO)' };
  const change = c.answer / b.answer - 1;
  const low = c.low / b.high - 1;
  const high = c.high / b.low - 1;
  const k = classify(t.metric, change, low, high, t.limit);
  const check: GateCheck = {
    metric: 'capacity',
    row: `capacity (${b.unit})`,
    threshold: thresholdText(t),
    limit: t.limit,
    baseline: b.answer,
    candidate: c.answer,
    change,
    low,
    high,
    verdict: k.verdict,
    improved: k.improved,
    evidence: `search brackets ${b.low}–${b.high} vs ${c.low}–${c.high} ${b.unit}, ${baseline.length} vs ${candidate.length} run${baseline.length + candidate.length > 2 ? 's' : ''}`,
  };
  if (k.verdict === 'inconclusive') {
    check.needs = `the search brackets are too wide for a ${thresholdText(t)} threshold: a finer --capacity-precision (now ${+(b.precision * 100).toFixed(2)}%, e.g. ${+Math.max(0.1, t.limit * 100 / 2).toFixed(2)}) would decide it`;
  }
  return { check };
}
