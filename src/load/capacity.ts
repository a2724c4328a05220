import { arrivalDispersion, type Slo, type StageSummary } from '../metrics/summary.js';
import { boundaryOf, contradictions, fitPooled, poolLoads, unsettledList, type PooledLoad } from './capacity-fit.js';
import { reproducibilityOf } from './capacity-repro.js';
import type { CapacityProbe, CapacityResult, CapacitySettings } from './capacity-types.js';

export { isotonic } from './capacity-fit.js';

/**
 * The capacity search (`--profile capacity`): the highest load at which a probe meets the SLO.
 *
 * Like the sweep, it decides each next probe from the summaries of the probes already run, so it is the same in
 * real and virtual time, and a resumed run picks up where it stopped. The search:
 *  1. a synchronous probe (one request at a time): if even that misses the SLO, there is no capacity;
 *  2. doubling from there (2×, 4×, … the synchronous rate, or 2, 4, 8 … streams) until a probe fails;
 *  3. bisection between the highest pass and the lowest failure, down to `precision` (relative, rate axis) or to
 *     adjacent stream counts.
 * Every decision reads all the probes, not the last probe alone (load/capacity-fit.ts): the runs of one load are
 * pooled, and a failure below a load that held is "not settled" — attainment can only fall as load rises, so one of
 * the two is noise: both are run again, and a failure still there is set aside and said in the answer rather than
 * putting the answer below a load the search showed to hold. A probe whose attainment lies within one binomial
 * standard error of the target, or that failed only on keeping up, is ambiguous: it is run again, up to `repeats`
 * runs of that load, and the runs are pooled.
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
/** A keep-up failure is near the boundary (run again before it counts) when completions were at least this share of sends. */
export const KEEP_UP_NEAR = 0.8;
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
    ...(s.overSaturated !== undefined ? { earlyStop: true } : {}),
    // Whole counts inside the window: runs of one load pool them to decide whether it kept up.
    ...(s.kind === 'open' ? { sends: Math.round(s.sendRate * s.durationS), completions: Math.round((s.completionRate ?? 0) * s.durationS) } : {}),
  };
}

/** The monotone fit over every probe: one point per distinct load, in load order (load/capacity-fit.ts). */
export function fitProbes(probes: readonly CapacityProbe[], settings: CapacitySettings): CapacityResult['fitted'] {
  return fitPooled(poolLoads(probes, settings));
}

/**
 * Some of the probe's requests met the SLO and some did not, and the share that did lies within one binomial
 * standard error of the target: another run of this load could come out on the other side. (A probe whose requests
 * all met it, or none did, shows no sign of the boundary: repeating it would only double its time.) Or the probe
 * failed only on keeping up, near the boundary — its attainment and errors were fine, it was not stopped as
 * over-saturated, and it completed at least 80% of its sends: a probe a little past capacity looks like that, and so
 * does one whose client or server hiccupped for part of its few seconds; another run tells them apart.
 */
export function ambiguous(p: CapacityProbe, settings: CapacitySettings): boolean {
  if (p.requests === 0 || p.errorShare > settings.maxErrorShare) return false;
  if (p.overSaturated !== undefined) {
    if (settings.virtualTime === true) return false;
    // Near the boundary: a probe far past capacity completes much less than it is sent (twice capacity: half).
    const near = p.sends === undefined || p.sends === 0 || (p.completions ?? 0) >= KEEP_UP_NEAR * p.sends;
    return p.earlyStop !== true && near && p.attainment >= settings.attainment;
  }
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
  const pooled = poolLoads(probes, settings);
  // A failure below a load that held is not settled: run the failures again, nearest first, then the lowest load that
  // held above them (once one load above them has held in every run it may have, the contradiction stands).
  const { failedBelow } = contradictions(pooled);
  if (failedBelow.length > 0) {
    for (const f of [...failedBelow].reverse()) if (!f.synchronousOnly && f.runs.length < settings.repeats) return at(f.load, f.runs.length + 1);
    const top = (failedBelow[failedBelow.length - 1] as PooledLoad).load;
    const heldAbove = pooled.filter((p) => p.pass && p.load > top && !p.synchronousOnly);
    const nearest = heldAbove[0];
    if (nearest && heldAbove.every((p) => p.runs.length < settings.repeats)) return at(nearest.load, nearest.runs.length + 1);
  }
  const { lo, hi } = boundaryOf(fitPooled(pooled));
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

/** What the search's precision is (CapacityResult.precisionMeaning): its step, not the answer's error. */
export function precisionMeaning(settings: Pick<CapacitySettings, 'axis' | 'precision'>): string {
  if (settings.axis === 'concurrency') return 'the search stops at adjacent stream counts: the answer held and one stream more failed';
  const pct = `${+(settings.precision * 100).toFixed(2)}%`;
  return (
    `±${pct} is the search's step: bisection stopped once the first failure lay within ${pct} of the highest pass. ` +
    `It is not the answer's error: how far the answer moves from run to run shows where the search ran a load twice (reproducibility), and in running it again`
  );
}

/** " — not settled: 15.18 req/s failed (did not keep up; 2 runs) below 18.21 req/s, which held (2 runs)". */
function unsettledText(list: ReturnType<typeof unsettledList>, fmt: (n: number) => string): string {
  if (list.length === 0) return '';
  const runs = (n: number): string => `${n} run${n === 1 ? '' : 's'}`;
  const held = list[0] as (typeof list)[number];
  const failed = list.map((c) => `${fmt(c.failed)} failed (${c.why}; ${runs(c.failedRuns)})`).join(', ');
  return ` — not settled: ${failed} below ${fmt(held.held)}, which held (${runs(held.heldRuns)}); the failure${list.length > 1 ? 's were' : ' was'} set aside`;
}

/** The search's answer from the rows it ran. */
export function capacityResult(done: readonly StageSummary[], settings: CapacitySettings, opts: { interrupted?: boolean } = {}): CapacityResult {
  const probes = done.map((s) => toProbe(s, settings)).sort((a, b) => a.load - b.load || a.stage - b.stage);
  const pooled = poolLoads(probes, settings);
  const fitted = fitPooled(pooled);
  const { lo, hi } = boundaryOf(fitted);
  const unsettled = lo && lo.load > 0 ? unsettledList(pooled) : [];
  const reproducibility = reproducibilityOf(probes, settings, formatLoad);
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
    // The precision is where the bisection stopped, not an error bar on the answer (precisionMeaning).
    const step = settings.axis === 'rate' ? `; search step ±${+(settings.precision * 100).toFixed(2)}%, not an error bar` : '';
    verdict = `capacity: ${fmt(lo.load)} — ${what} at which ${target} (${breach}${hi ? step : ''})${unsettledText(unsettled, fmt)}`;
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
    precisionMeaning: precisionMeaning(settings),
    settled: unsettled.length === 0,
    ...(unsettled.length > 0 ? { unsettled } : {}),
    ...(reproducibility ? { reproducibility } : {}),
  };
}

/** Said once with every capacity result: what an attainment target means in percentile terms. */
export function attainmentMeaning(settings: Pick<CapacitySettings, 'attainment' | 'slo'>): string {
  const first = describeSlo(settings.slo).split(', ')[0] ?? '';
  const [metric = 'ttft', limit = ''] = first.split(' ≤ ');
  return `${settings.attainment}% attainment of ${first} is the same as p${settings.attainment} ${metric.toUpperCase()} ≤ ${limit}, counting failed and cut requests as misses; with several limits, each request must meet all of them`;
}
