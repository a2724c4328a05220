import { arrivalDispersion, type Slo, type StageSummary } from '../metrics/summary.js';
import type { CapacityProbe, CapacityResult, CapacitySettings } from './capacity-types.js';

/**
 * The capacity search (`--profile capacity`): the highest load at which a probe meets the SLO.
 *
 * Like the sweep, it decides each next probe from the summaries of the probes already run, so it is the same in
 * real and virtual time, and a resumed run picks up where it stopped. The search:
 *  1. a synchronous probe (one request at a time): if even that misses the SLO, there is no capacity;
 *  2. doubling from there (2×, 4×, … the synchronous rate, or 2, 4, 8 … streams) until a probe fails;
 *  3. bisection between the highest pass and the lowest failure, down to `precision` (relative, rate axis) or to
 *     adjacent stream counts.
 * Every decision reads a monotone fit over all probes, not the last probe alone: attainment can only fall as load
 * rises, so probes that disagree (a pass above a failure, noise near the boundary) are pooled by isotonic
 * regression, weighted by their request counts. A probe whose attainment lies within one binomial standard error
 * of the target is ambiguous: it is run again, up to `repeats` runs of that load, and the runs are pooled.
 */

export const CAPACITY_DEFAULTS = {
  axis: 'rate',
  attainment: 99,
  maxErrorShare: 0.01,
  precision: 0.05,
  repeats: 2,
} as const;

/** The search gives up (and says so) after this many probes. */
export const MAX_CAPACITY_PROBES = 40;
/** Loads the doubling never passes: far beyond any single deployment. */
const MAX_LOAD = { rate: 100_000, concurrency: 16_384 } as const;

/** What to run next. */
export type CapacityStep = { kind: 'synchronous' } | { kind: 'rate'; rate: number; run: number } | { kind: 'concurrency'; streams: number; run: number };

/** A probe's load on the search axis: the synchronous probe sits at its achieved rate on the rate axis. */
export function probeLoad(s: StageSummary, axis: CapacitySettings['axis']): number {
  if (s.kind === 'open') return s.targetRate ?? 0;
  if (axis === 'rate') return s.requestThroughput;
  return s.concurrency ?? 1;
}

/**
 * Why an open-loop probe did not hold its rate, if it did not: the row's own overload test (summary.ts), or — stricter,
 * because a capacity is a rate held indefinitely — completions inside the window under 95% of sends (one request of
 * slack for whole counts). A probe a little past capacity completes ~90% of what it is sent for the few seconds a row
 * lasts, its latencies still fine: it would pass on attainment alone, and the answer would overstate the capacity.
 */
export function keepUpFailure(s: StageSummary, arrival?: CapacitySettings['arrival'], burstiness?: number): string | undefined {
  if (s.overSaturated !== undefined) return s.overSaturated;
  if (s.kind !== 'open') return undefined;
  if (s.belowTarget) return s.overload ?? 'did not keep up with its rate';
  const sends = s.sendRate * s.durationS;
  const completions = (s.completionRate ?? 0) * s.durationS;
  // Random arrivals make the in-flight count at the window's two ends random too: allow 2.5 standard deviations.
  const noise = 2.5 * Math.sqrt(arrivalDispersion(arrival, burstiness) * sends);
  if (sends >= 3 && completions < 0.95 * sends - 1 - noise) {
    return `completed ${(s.completionRate ?? 0).toFixed(2)} req/s of ${s.sendRate.toFixed(2)} sent: the queue grew`;
  }
  return undefined;
}

/**
 * One probe against the SLO. A probe that did not keep up with its rate (its queue grew) fails whatever its
 * attainment: a rate the server cannot keep up with is not one it holds, however long the row would have had to be
 * for its latencies to show it.
 */
export function toProbe(s: StageSummary, settings: CapacitySettings): CapacityProbe {
  const requests = s.sloAttainment?.of ?? s.requests.total;
  const attainment = s.sloAttainment?.percent ?? 0;
  const overloaded = keepUpFailure(s, settings.arrival, settings.burstiness);
  const pass = requests > 0 && overloaded === undefined && attainment >= settings.attainment && s.failureShare <= settings.maxErrorShare;
  return {
    stage: s.index,
    load: probeLoad(s, settings.axis),
    attainment,
    requests,
    errorShare: s.failureShare,
    pass,
    ...(overloaded !== undefined ? { overSaturated: overloaded } : {}),
  };
}

type FitPoint = CapacityResult['fitted'][number];

/**
 * Pool-adjacent-violators: the weighted least-squares fit of `values` (in load order) that never rises (or, with
 * `rising`, never falls).
 */
export function isotonic(values: readonly number[], weights: readonly number[], rising = false): number[] {
  const blocks: Array<{ sum: number; weight: number; count: number }> = [];
  for (let i = 0; i < values.length; i++) {
    const v = rising ? -(values[i] as number) : (values[i] as number);
    const w = Math.max(weights[i] as number, 1e-9);
    blocks.push({ sum: v * w, weight: w, count: 1 });
    // Merge while the last block is higher than the one before it (a non-increasing fit may not rise).
    while (blocks.length > 1) {
      const b = blocks[blocks.length - 1] as (typeof blocks)[number];
      const a = blocks[blocks.length - 2] as (typeof blocks)[number];
      if (b.sum / b.weight <= a.sum / a.weight) break;
      blocks.splice(blocks.length - 2, 2, { sum: a.sum + b.sum, weight: a.weight + b.weight, count: a.count + b.count });
    }
  }
  const out: number[] = [];
  for (const b of blocks) for (let k = 0; k < b.count; k++) out.push((rising ? -1 : 1) * (b.sum / b.weight));
  return out;
}

/** The monotone fit over every probe: one point per distinct load, in load order. */
export function fitProbes(probes: readonly CapacityProbe[], settings: CapacitySettings): FitPoint[] {
  const byLoad = new Map<number, CapacityProbe[]>();
  for (const p of probes) byLoad.set(p.load, [...(byLoad.get(p.load) ?? []), p]);
  const loads = [...byLoad.keys()].sort((a, b) => a - b);
  const weights: number[] = [];
  const scores: number[] = [];
  const errors: number[] = [];
  for (const load of loads) {
    const group = byLoad.get(load) as CapacityProbe[];
    let w = 0;
    let score = 0;
    let err = 0;
    for (const p of group) {
      const pw = Math.max(p.requests, 1);
      w += pw;
      // A probe that did not keep up counts as meeting nothing (its own attainment describes a cut-short row).
      score += pw * (p.overSaturated !== undefined ? 0 : p.attainment);
      err += pw * p.errorShare;
    }
    weights.push(w);
    scores.push(score / w);
    errors.push(err / w);
  }
  const fitScore = isotonic(scores, weights);
  const fitError = isotonic(errors, weights, true);
  // A fitted value within rounding of the target passes (pooling divides sums).
  const eps = 1e-9;
  return loads.map((load, i) => {
    const attainment = fitScore[i] as number;
    const errorShare = fitError[i] as number;
    return {
      load,
      attainment,
      errorShare,
      pass: attainment >= settings.attainment - eps && errorShare <= settings.maxErrorShare + eps,
      runs: (byLoad.get(load) as CapacityProbe[]).length,
    };
  });
}

/** Highest fitted pass and lowest fitted failure above it (the fit is monotone: passes come first). */
function boundary(fit: readonly FitPoint[]): { lo?: FitPoint; hi?: FitPoint } {
  let lo: FitPoint | undefined;
  for (const p of fit) if (p.pass) lo = p;
  const hi = fit.find((p) => !p.pass && (lo === undefined || p.load > lo.load));
  return { ...(lo ? { lo } : {}), ...(hi ? { hi } : {}) };
}

/**
 * Some of the probe's requests met the SLO and some did not, and the share that did lies within one binomial
 * standard error of the target: another run of this load could come out on the other side. (A probe whose requests
 * all met it, or none did, shows no sign of the boundary: repeating it would only double its time.)
 */
export function ambiguous(p: CapacityProbe, settings: CapacitySettings): boolean {
  if (p.overSaturated !== undefined || p.requests === 0 || p.errorShare > settings.maxErrorShare) return false;
  if (p.attainment <= 0 || p.attainment >= 100) return false;
  const observed = p.attainment / 100;
  const se = 100 * Math.sqrt((observed * (1 - observed)) / p.requests);
  return Math.abs(p.attainment - settings.attainment) <= se;
}

function converged(lo: number, hi: number, settings: CapacitySettings): boolean {
  return settings.axis === 'concurrency' ? hi - lo <= 1 : hi - lo <= settings.precision * lo;
}

/** The next probe, or undefined when the search is over. */
export function nextCapacityStep(done: readonly StageSummary[], settings: CapacitySettings): CapacityStep | undefined {
  if (done.length === 0) return { kind: 'synchronous' };
  if (done.length >= MAX_CAPACITY_PROBES) return undefined;
  const probes = done.map((s) => toProbe(s, settings));
  const at = (load: number, run: number): CapacityStep =>
    settings.axis === 'rate' ? { kind: 'rate', rate: load, run } : { kind: 'concurrency', streams: load, run };
  const runsAt = (load: number): number => probes.filter((p) => p.load === load).length;
  // Noise near the boundary: run an ambiguous probe again before deciding on it (not the synchronous probe).
  const last = probes[probes.length - 1] as CapacityProbe;
  if (done.length > 1 && ambiguous(last, settings) && runsAt(last.load) < settings.repeats) return at(last.load, runsAt(last.load) + 1);
  const { lo, hi } = boundary(fitProbes(probes, settings));
  if (!lo || lo.load <= 0) return undefined; // even one request at a time misses the SLO
  if (!hi) {
    const next = settings.axis === 'concurrency' ? Math.max(2, lo.load * 2) : roundRate(lo.load * 2);
    return next > MAX_LOAD[settings.axis] ? undefined : at(next, 1);
  }
  if (converged(lo.load, hi.load, settings)) return undefined;
  const mid = settings.axis === 'concurrency' ? Math.floor((lo.load + hi.load) / 2) : roundRate((lo.load + hi.load) / 2);
  return at(mid, runsAt(mid) + 1);
}

/** Four significant digits: rates the table prints and a resumed run recomputes identically. */
function roundRate(r: number): number {
  return Number(r.toPrecision(4));
}

const f2 = (n: number): string => n.toFixed(2);

/** A rate as printed: two decimals, three significant digits under 1 req/s. */
function formatRate(n: number): string {
  return n < 1 ? n.toPrecision(3) : f2(n);
}

/** A load as printed: streams whole, rates as formatRate. */
export function formatLoad(n: number): string {
  return Number.isInteger(n) ? String(n) : formatRate(n);
}

/** "ttft ≤ 300 ms, itl ≤ 50 ms". */
export function describeSlo(slo: Slo): string {
  const parts: string[] = [];
  if (slo.ttftMs !== undefined) parts.push(`ttft ≤ ${slo.ttftMs} ms`);
  if (slo.itlMs !== undefined) parts.push(`itl ≤ ${slo.itlMs} ms`);
  if (slo.e2eMs !== undefined) parts.push(`e2e ≤ ${slo.e2eMs} ms`);
  return parts.join(', ');
}

/** The search's answer from the rows it ran. */
export function capacityResult(done: readonly StageSummary[], settings: CapacitySettings, opts: { interrupted?: boolean } = {}): CapacityResult {
  const probes = done.map((s) => toProbe(s, settings)).sort((a, b) => a.load - b.load || a.stage - b.stage);
  const fitted = fitProbes(probes, settings);
  const { lo, hi } = boundary(fitted);
  const unit = settings.axis === 'rate' ? 'req/s' : 'streams';
  const fmt = (n: number): string => (settings.axis === 'rate' ? `${formatRate(n)} req/s` : `${n} stream${n === 1 ? '' : 's'}`);
  const what = settings.axis === 'rate' ? 'the highest rate' : 'the most concurrent streams';
  const target = `${settings.attainment}% of requests met ${describeSlo(settings.slo)}${settings.maxErrorShare < 1 ? ` with at most ${+(settings.maxErrorShare * 100).toFixed(2)}% failed` : ''}`;
  const precision = settings.axis === 'rate' ? settings.precision : 1;
  let verdict: string;
  let note: string | undefined;
  if (!lo || lo.load <= 0) {
    verdict = `capacity: none — even one request at a time missed the SLO (${target.replace(' met ', ' had to meet ')}; the synchronous probe reached ${f2(probes.find((p) => p.stage === 0)?.attainment ?? 0)}%)`;
  } else {
    const breach = hi ? `first failure at ${fmt(hi.load)}` : `no load failed up to ${fmt(lo.load)}`;
    const pm = settings.axis === 'rate' ? `; ±${+(settings.precision * 100).toFixed(2)}%` : '';
    verdict = `capacity: ${fmt(lo.load)} — ${what} at which ${target} (${breach}${hi ? pm : ''})`;
    if (!hi) note = `the search stopped before any load failed (${done.length} probes)`;
    else if (!converged(lo.load, hi.load, settings)) note = opts.interrupted ? 'interrupted before the search converged' : `stopped after ${done.length} probes before reaching the precision`;
  }
  return {
    axis: settings.axis,
    unit,
    feasibleMax: lo && lo.load > 0 ? lo.load : null,
    firstBreach: hi ? hi.load : null,
    precision,
    attainment: settings.attainment,
    maxErrorShare: settings.maxErrorShare,
    slo: settings.slo,
    probes,
    fitted,
    verdict,
    ...(note ? { note } : {}),
  };
}

/** Said once with every capacity result: what an attainment target means in percentile terms. */
export function attainmentMeaning(settings: Pick<CapacitySettings, 'attainment' | 'slo'>): string {
  const first = describeSlo(settings.slo).split(', ')[0] ?? '';
  const [metric = 'ttft', limit = ''] = first.split(' ≤ ');
  return `${settings.attainment}% attainment of ${first} is the same as p${settings.attainment} ${metric.toUpperCase()} ≤ ${limit}, counting failed and cut requests as misses; with several limits, each request must meet all of them`;
}
