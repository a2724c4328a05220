import type { StageAccumulator } from './accumulator.js';
import { computeStats, type Stats } from './stats.js';
import { sentRequestLatencies, windowFigures } from './window-figures.js';
import type { SteadyStateFigures } from '../results/stage.js';

export type { SteadyStateFigures } from '../results/stage.js';

/** In-flight count as steps: [time, count after it]. */
function inFlightSteps(acc: StageAccumulator): Array<[number, number]> {
  const t = acc.timeline;
  const sent = t.sent.view();
  const end = t.end.view();
  const events: Array<[number, number]> = [];
  for (let i = 0; i < sent.length; i++) events.push([sent[i] as number, 1], [end[i] as number, -1]);
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const steps: Array<[number, number]> = [];
  let n = 0;
  for (const [at, d] of events) {
    n += d;
    const last = steps[steps.length - 1];
    if (last && last[0] === at) last[1] = n;
    else steps.push([at, n]);
  }
  return steps;
}

export function steadyStateFigures(acc: StageAccumulator, fromMs: number, toMs: number, rowStartMs: number): SteadyStateFigures | undefined {
  if (!(toMs > fromMs)) return undefined;
  const steps = inFlightSteps(acc);
  // Time-weighted samples of the count inside [from, to]: segments [start, end) with their count.
  const segments: Array<{ a: number; b: number; n: number }> = [];
  let count = 0;
  for (let i = 0; i < steps.length; i++) {
    const [at, n] = steps[i] as [number, number];
    const next = i + 1 < steps.length ? (steps[i + 1] as [number, number])[0] : Infinity;
    if (at >= toMs) break;
    count = n;
    const a = Math.max(at, fromMs);
    const b = Math.min(next, toMs);
    if (b > a) segments.push({ a, b, n: count });
  }
  if (segments.length === 0) return undefined;
  const sorted = [...segments].sort((x, y) => x.n - y.n);
  const total = segments.reduce((s, g) => s + (g.b - g.a), 0);
  let acc0 = 0;
  let median = (sorted[sorted.length - 1] as { n: number }).n;
  for (const g of sorted) {
    acc0 += g.b - g.a;
    if (acc0 >= total / 2) {
      median = g.n;
      break;
    }
  }
  const half = Math.max(2, 0.2 * median);
  const band: [number, number] = [Math.max(0, median - half), median + half];
  let best: { a: number; b: number } | undefined;
  let run: { a: number; b: number } | undefined;
  for (const g of segments) {
    if (g.n >= band[0] && g.n <= band[1]) {
      run = run && run.b === g.a ? { a: run.a, b: g.b } : { a: g.a, b: g.b };
      if (!best || run.b - run.a > best.b - best.a) best = run;
    } else run = undefined;
  }
  if (!best || best.b - best.a < 0.25 * (toMs - fromMs)) return undefined;
  const fig = windowFigures(acc, best.a, best.b);
  const inBand = sentRequestLatencies(acc, best.a, best.b);
  const ttft = inBand.map((r) => r.ttft);
  const itl = inBand.map((r) => r.itl).filter((x) => !Number.isNaN(x));
  const ttftStats = computeStats(ttft);
  const itlStats = computeStats(itl);
  return {
    startS: (best.a - rowStartMs) / 1000,
    lengthS: fig.lengthS,
    inFlightMedian: median,
    band,
    requestThroughput: fig.okRequestsDone / fig.lengthS,
    outputTokenThroughput: fig.outputTokens / fig.lengthS,
    sendRate: fig.sends / fig.lengthS,
    ...(ttftStats ? { ttftMs: ttftStats } : {}),
    ...(itlStats ? { itlMs: itlStats } : {}),
  };
}
