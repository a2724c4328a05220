import type { Stats } from './stats.js';
import type { StageSummary } from '../results/stage.js';
import type { RepeatInterval } from '../results/stage.js';

export type { RepeatInterval } from '../results/stage.js';

/** Figures that get an interval: the table's main columns. */
export const REPEAT_FIGURES: Record<string, (s: StageSummary) => number | undefined> = {
  requestThroughput: (s) => s.requestThroughput,
  outputTokenThroughput: (s) => s.outputTokenThroughput,
  totalTokenThroughput: (s) => s.totalTokenThroughput,
  promptTokenThroughput: (s) => s.promptTokenThroughput,
  inputThroughput: (s) => s.inputThroughput,
  sendRate: (s) => s.sendRate,
  ttftMean: (s) => s.metrics.ttftMs?.mean,
  ttftP99: (s) => s.metrics.ttftMs?.p99,
  itlMean: (s) => s.metrics.itlMs?.mean,
  itlP99: (s) => s.metrics.itlMs?.p99,
  e2eMean: (s) => s.metrics.e2eMs?.mean,
  e2eP99: (s) => s.metrics.e2eMs?.p99,
  goodput: (s) => s.goodput?.requestsPerS,
};

/** t(0.975, df) for df = 1…30; past 30 the normal 1.96 is within 2%. */
const T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042];

export function studentT975(df: number): number {
  if (df < 1) return Number.NaN;
  return df <= 30 ? (T975[df - 1] as number) : 1.96 + 2.4 / df;
}

export function interval(values: readonly number[]): RepeatInterval {
  const n = values.length;
  const mean = values.reduce((a, b) => a + b, 0) / Math.max(1, n);
  const variance = n > 1 ? values.reduce((a, v) => a + (v - mean) ** 2, 0) / (n - 1) : 0;
  const stddev = Math.sqrt(variance);
  return { mean, halfWidth: n > 1 ? (studentT975(n - 1) * stddev) / Math.sqrt(n) : 0, stddev, n, values: [...values] };
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

function meanStats(list: ReadonlyArray<Stats | undefined>): Stats | undefined {
  const present = list.filter((s): s is Stats => s !== undefined && s.count > 0);
  if (present.length === 0) return undefined;
  const field = (k: keyof Stats): number => mean(present.map((s) => s[k]));
  return {
    count: present.reduce((a, s) => a + s.count, 0),
    mean: field('mean'),
    median: field('median'),
    p90: field('p90'),
    p95: field('p95'),
    p99: field('p99'),
    min: Math.min(...present.map((s) => s.min)),
    max: Math.max(...present.map((s) => s.max)),
    stddev: field('stddev'),
  };
}

/** One row standing for its N repeats (see above); the repeats themselves are kept under `repeats`. */
export function aggregateRepeats(runs: readonly StageSummary[]): StageSummary {
  const first = runs[0];
  if (!first) throw new Error('aggregateRepeats needs at least one run');
  if (runs.length === 1) return first;
  const avg = (pick: (s: StageSummary) => number): number => mean(runs.map(pick));
  const sum = (pick: (s: StageSummary) => number): number => runs.reduce((a, s) => a + pick(s), 0);
  const metrics: StageSummary['metrics'] = {};
  const names = new Set(runs.flatMap((s) => Object.keys(s.metrics))) as Set<keyof StageSummary['metrics']>;
  for (const name of names) {
    const m = meanStats(runs.map((s) => s.metrics[name]));
    if (m) metrics[name] = m;
  }
  const errorsByCode: Record<string, number> = {};
  const tokenCountSources: Record<string, number> = {};
  for (const s of runs) {
    for (const [k, v] of Object.entries(s.errorsByCode)) errorsByCode[k] = (errorsByCode[k] ?? 0) + v;
    for (const [k, v] of Object.entries(s.tokenCountSources)) tokenCountSources[k] = (tokenCountSources[k] ?? 0) + v;
  }
  const intervals: Record<string, RepeatInterval> = {};
  for (const [key, pick] of Object.entries(REPEAT_FIGURES)) {
    const values = runs.map(pick).filter((v): v is number => v !== undefined && Number.isFinite(v));
    if (values.length === runs.length) intervals[key] = interval(values);
  }
  const overloaded = runs.find((s) => s.belowTarget);
  const retried = sum((s) => s.requests.retried ?? 0);
  const cooldown = sum((s) => s.requests.cooldown ?? 0);
  const out: StageSummary = {
    ...first,
    durationS: avg((s) => s.durationS),
    requests: {
      total: sum((s) => s.requests.total),
      ok: sum((s) => s.requests.ok),
      errors: sum((s) => s.requests.errors),
      incomplete: sum((s) => s.requests.incomplete),
      warmup: sum((s) => s.requests.warmup),
      ...(retried > 0 ? { retried } : {}),
      ...(cooldown > 0 ? { cooldown, cooldownCut: sum((s) => s.requests.cooldownCut ?? 0) } : {}),
    },
    errorsByCode,
    tokenCountSources,
    failureShare: avg((s) => s.failureShare),
    requestThroughput: avg((s) => s.requestThroughput),
    outputTokenThroughput: avg((s) => s.outputTokenThroughput),
    promptTokenThroughput: avg((s) => s.promptTokenThroughput),
    totalTokenThroughput: avg((s) => s.totalTokenThroughput),
    ...(first.inputThroughput !== undefined ? { inputThroughput: avg((s) => s.inputThroughput ?? 0) } : {}),
    sendRate: avg((s) => s.sendRate),
    completionRate: avg((s) => s.completionRate ?? 0),
    meanConcurrency: avg((s) => s.meanConcurrency),
    belowTarget: overloaded !== undefined,
    metrics,
    outputLengthMismatches: sum((s) => s.outputLengthMismatches),
    promptLengthMismatches: sum((s) => s.promptLengthMismatches),
    startedAtMs: first.startedAtMs,
    endedAtMs: runs[runs.length - 1]?.endedAtMs,
    interrupted: runs.some((s) => s.interrupted),
    intervals,
    repeats: runs.map((s) => ({ ...s })),
  };
  if (overloaded?.overload) out.overload = `${overloaded.overload} (repeat ${runs.indexOf(overloaded) + 1} of ${runs.length})`;
  else delete out.overload;
  const good = runs.filter((s) => s.goodput);
  if (good.length === runs.length && first.goodput) {
    out.goodput = { slo: first.goodput.slo, good: sum((s) => s.goodput?.good ?? 0), requestsPerS: avg((s) => s.goodput?.requestsPerS ?? 0) };
  }
  if (runs.every((s) => s.sloAttainment)) {
    const met = sum((s) => s.sloAttainment?.met ?? 0);
    const of = sum((s) => s.sloAttainment?.of ?? 0);
    out.sloAttainment = { percent: of > 0 ? (100 * met) / of : 0, met, of };
  }
  // A row's window instants belong to one repeat: the repeats keep theirs.
  if (out.window) {
    const { fromMs: _f, toMs: _t, ...w } = out.window;
    out.window = { ...w, lengthS: avg((s) => s.window?.lengthS ?? 0) };
  }
  return out;
}
