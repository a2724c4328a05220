import type { MetricName, StageSummary } from '../results/index.js';
import type { StoredRun } from '../store/run-store.js';
import { gridCells } from './layouts.js';

/**
 * Like with like, measured: two runs that asked for the same lengths may still have served different ones (a server
 * that cannot force the output length stops at its own end of text: TGI's "512-token" cells averaged 245 tokens
 * beside vLLM's 512). Their throughputs then compare different work. `compare` checks the achieved mean prompt and
 * output lengths — per input/output cell for grids, over every measured success for sweeps (whose rows share one
 * workload) — and treats a gap above this share of the first run's mean as it treats different requested lengths.
 */
export const MEASURED_LENGTH_TOLERANCE = 0.05;

export interface LengthGap {
  /** Grid cell "512/512", or undefined for a sweep's whole run. */
  cell?: string;
  what: 'output' | 'prompt';
  baseline: { series: string; meanTokens: number };
  other: { series: string; meanTokens: number };
}

type Mean = { mean: number; count: number };

/** The mean of a per-request metric over the successes of several stages, weighted by their counts. */
function pooledMean(stages: readonly (StageSummary | undefined)[], metric: MetricName): Mean | undefined {
  let sum = 0;
  let count = 0;
  for (const s of stages) {
    const st = s && s.requests.ok > 0 ? s.metrics[metric] : undefined;
    if (!st || !(st.count > 0) || !Number.isFinite(st.mean)) continue;
    sum += st.mean * st.count;
    count += st.count;
  }
  return count > 0 ? { mean: sum / count, count } : undefined;
}

/** Where a run's lengths are read: each grid cell, or the whole sweep ('' key). */
function lengthGroups(run: StoredRun): Map<string, StageSummary[]> {
  if (run.summary.layout !== 'grid') return new Map([['', run.summary.stages]]);
  return new Map(gridCells(run.summary.stages).map((c) => [`${c.input}/${c.output}`, [c.throughput, c.latency].filter((s): s is StageSummary => s !== undefined)] as const));
}

/** Every cell (grids) or run (sweeps) whose measured mean length is more than the tolerance off the first run's. */
export function measuredLengthGaps(runs: readonly StoredRun[], names: readonly string[]): LengthGap[] {
  const [base, ...rest] = runs;
  if (!base) return [];
  const baseGroups = lengthGroups(base);
  const out: LengthGap[] = [];
  rest.forEach((run, j) => {
    for (const [key, stages] of lengthGroups(run)) {
      const baseStages = baseGroups.get(key);
      if (!baseStages) continue;
      for (const [what, metric] of [['output', 'outputTokens'], ['prompt', 'promptTokens']] as const) {
        const b = pooledMean(baseStages, metric);
        const o = pooledMean(stages, metric);
        if (!b || !o || b.mean <= 0) continue;
        if (Math.abs(o.mean - b.mean) / b.mean <= MEASURED_LENGTH_TOLERANCE) continue;
        out.push({
          ...(key ? { cell: key } : {}),
          what,
          baseline: { series: names[0] ?? base.id, meanTokens: b.mean },
          other: { series: names[j + 1] ?? run.id, meanTokens: o.mean },
        });
      }
    }
  });
  return out;
}

const tokens = (n: number): string => n.toFixed(n >= 100 ? 0 : 1);
const signed = (x: number): string => `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(0)}%`;

/**
 * "measured output length (more than 5% apart): cell 512/512 averaged 245 tokens in tgi, 512 in vllm (−52%); …" — one text per kind of
 * length and pair of runs, cells listed (at most four, then how many more).
 */
export function lengthGapTexts(gaps: readonly LengthGap[]): string[] {
  const groups = new Map<string, LengthGap[]>();
  for (const g of gaps) {
    const k = `${g.what}\u0000${g.baseline.series}\u0000${g.other.series}`;
    groups.set(k, [...(groups.get(k) ?? []), g]);
  }
  return [...groups.values()].map((list) => {
    const first = list[0] as LengthGap;
    const each = list.slice(0, 4).map((g) => {
      const where = g.cell ? `cell ${g.cell} averaged` : 'requests averaged';
      return `${where} ${tokens(g.other.meanTokens)} tokens in ${g.other.series}, ${tokens(g.baseline.meanTokens)} in ${g.baseline.series} (${signed((g.other.meanTokens - g.baseline.meanTokens) / g.baseline.meanTokens)})`;
    });
    const more = list.length > 4 ? `; and ${list.length - 4} more cells` : '';
    return `measured ${first.what} length (more than ${MEASURED_LENGTH_TOLERANCE * 100}% apart): ${each.join('; ')}${more}`;
  });
}

/** The cells (grids) of a run flagged by a gap, for marking its Δ columns. */
export function flaggedCells(gaps: readonly LengthGap[], series: string): Set<string> {
  return new Set(gaps.filter((g) => g.other.series === series && g.cell !== undefined).map((g) => g.cell as string));
}
