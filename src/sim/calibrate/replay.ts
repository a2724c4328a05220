/**
 * Re-costing a recorded schedule. The fit simulates a scenario once, keeps every step's batch and which request
 * started in which step, and afterwards only re-prices the steps under each trial calibration: step k starts when
 * step k − 1 has ended and every request whose prompt it starts has arrived (sent + ingest); a request is sent at
 * its fixed time (burst: 0; open loop: its arrival), or, in a closed loop, when the request whose stream it
 * continues ended. Milliseconds instead of seconds for a 3,000-request burst.
 *
 * Under the recording calibration the replay reproduces the simulation exactly (checked at recording time, or the
 * scenario is simulated instead). Under another calibration it is
 * - exact for all-at-once bursts and one-request-at-a-time loops (`exact`): every request is already waiting, or
 *   the engine is alone with one, so no scheduling decision depends on how long a step takes;
 * - a surrogate for open loops and closed loops with more than one stream: the batches stay as recorded, where a
 *   faster or slower engine would have admitted a request a step earlier or later. The fit re-records these at the
 *   start of each pass (Evaluator.refresh) and reports its final figures from full simulations.
 */
import type { StepCostModel, BatchSummary } from '../cost/step-cost.js';
import { type ResolvedSimEngine, resolveSimEngine } from '../create.js';
import type { RequestRecord } from '../../metrics/record.js';
import { quantile } from '../../metrics/stats.js';
import { runVirtualStage } from '../virtual-runner.js';
import { type SeedScenario, type StageSummary, summarizeRecords, weightedMedian } from '../seed-compare.js';
import type { Calibration } from './types.js';

interface ReplayRequest {
  /** Step indexes of the prompt's first chunk, the first token and the last token. */
  start: number;
  first: number;
  last: number;
  /** Send time under the recording calibration (ms); `pred` ≥ 0: sent when request `pred` ended (closed loops). */
  sentAt: number;
  pred: number;
  /** Open loops: the wait from arrival to its first step, in durations of the step before (recording calibration). */
  waitSteps: number;
  outputTokens: number;
  promptTokens: number;
}

export type ReplayMode = 'burst' | 'serial' | 'closed' | 'open';

export interface ReplayTrace {
  mode: ReplayMode;
  /** True when the replay equals a full simulation under any calibration (bursts, one request at a time). */
  exact: boolean;
  /** Flattened steps: decodeSeqs, decodeCtxSum, emittingSeqs, prefillCount, then prefillCount × (prior, tokens). */
  steps: Float64Array;
  offsets: Uint32Array;
  /** In the order their prompts start (request j starts at or after request j − 1's step). */
  requests: ReplayRequest[];
}

function flatten(list: BatchSummary[]): { steps: Float64Array; offsets: Uint32Array } {
  let size = 0;
  for (const b of list) size += 4 + 2 * b.prefillCount;
  const steps = new Float64Array(size);
  const offsets = new Uint32Array(list.length + 1);
  let o = 0;
  list.forEach((b, k) => {
    offsets[k] = o;
    steps[o++] = b.decodeSeqs;
    steps[o++] = b.decodeCtxSum;
    steps[o++] = b.emittingSeqs;
    steps[o++] = b.prefillCount;
    for (let i = 0; i < b.prefillCount; i++) {
      steps[o++] = b.prefillPrior[i] ?? 0;
      steps[o++] = b.prefillTokens[i] ?? 0;
    }
  });
  offsets[list.length] = o;
  return { steps, offsets };
}

/** Durations (ms) of every recorded step under a cost model. */
function stepDurations(trace: ReplayTrace, cost: StepCostModel): Float64Array {
  const n = trace.offsets.length - 1;
  const out = new Float64Array(n);
  const b: BatchSummary = { decodeSeqs: 0, decodeCtxSum: 0, prefillCount: 0, prefillPrior: [], prefillTokens: [], emittingSeqs: 0 };
  const s = trace.steps;
  for (let k = 0; k < n; k++) {
    let o = trace.offsets[k] as number;
    b.decodeSeqs = s[o++] as number;
    b.decodeCtxSum = s[o++] as number;
    b.emittingSeqs = s[o++] as number;
    b.prefillCount = s[o++] as number;
    for (let i = 0; i < b.prefillCount; i++) {
      b.prefillPrior[i] = s[o++] as number;
      b.prefillTokens[i] = s[o++] as number;
    }
    out[k] = cost.stepMs(b);
  }
  return out;
}

/** Step end times (ms) and request send times when the recorded steps take `dt` each. */
function retime(
  trace: ReplayTrace, dt: Float64Array, ingestMs: number, egressMs: number, recordedSends = false,
): { stepEnd: Float64Array; sent: Float64Array } {
  const reqs = trace.requests;
  const stepEnd = new Float64Array(dt.length);
  const sent = new Float64Array(reqs.length);
  let prevEnd = -Infinity;
  let j = 0;
  for (let k = 0; k < dt.length; k++) {
    let start = prevEnd;
    for (; j < reqs.length && (reqs[j] as ReplayRequest).start === k; j++) {
      const q = reqs[j] as ReplayRequest;
      const s = q.pred >= 0 && !recordedSends ? (stepEnd[(reqs[q.pred] as ReplayRequest).last] as number) + egressMs : q.sentAt;
      sent[j] = s;
      if (s + ingestMs > start) start = s + ingestMs;
    }
    prevEnd = start + (dt[k] as number);
    stepEnd[k] = prevEnd;
  }
  return { stepEnd, sent };
}

/** The stage summary a replay gives under a resolved engine (its cost model, ingest and egress times). */
export function replaySummary(trace: ReplayTrace, r: ResolvedSimEngine): StageSummary {
  const dt = stepDurations(trace, r.config.cost);
  const { ingestMs, egressMs } = r.config;
  if (trace.mode === 'open') return summarize(openRequests(trace, dt, ingestMs, egressMs), () => openGapMedian(trace, dt));
  const { stepEnd, sent } = retime(trace, dt, ingestMs, egressMs);
  const recs = trace.requests.map((q, j) => ({
    sent: sent[j] as number, first: (stepEnd[q.first] as number) + egressMs, end: (stepEnd[q.last] as number) + egressMs,
    out: q.outputTokens, prompt: q.promptTokens,
  }));
  return summarize(recs, () => gapMedian(trace, stepEnd));
}

const hasDecodes = (trace: ReplayTrace, k: number): boolean => (trace.steps[trace.offsets[k] as number] as number) > 0;

/**
 * The median of every inter-token gap, pooled over requests, from the step ends alone: a request emits its first
 * token at step `first` and then one in every step with decodes up to `last` (every running sequence decodes in
 * such a step; runs where this does not hold fail the check at recording and are simulated instead). At a decode
 * step k whose previous decode step is k′, the requests that emitted at k′ or earlier decode steps see the gap
 * end(k) − end(k′); those whose first token came in a prefill-only step p between them see end(k) − end(p).
 */
function gapMedian(trace: ReplayTrace, stepEnd: Float64Array): number {
  const n = stepEnd.length;
  const startsDecoding = new Int32Array(n + 1);
  const firstsAt = new Int32Array(n);
  for (const q of trace.requests) {
    if (q.last <= q.first) continue;
    startsDecoding[q.first + 1] = (startsDecoding[q.first + 1] as number) + 1;
    startsDecoding[q.last + 1] = (startsDecoding[q.last + 1] as number) - 1;
    firstsAt[q.first] = (firstsAt[q.first] as number) + 1;
  }
  const values: number[] = [];
  const counts: number[] = [];
  let active = 0;
  let prevDecode = -1;
  let pending: number[] = [];
  for (let k = 0; k < n; k++) {
    active += startsDecoding[k] as number;
    if (hasDecodes(trace, k) && active > 0) {
      let fresh = 0;
      for (const p of pending) {
        values.push((stepEnd[k] as number) - (stepEnd[p] as number));
        counts.push(firstsAt[p] as number);
        fresh += firstsAt[p] as number;
      }
      if (prevDecode >= 0 && active > fresh) {
        values.push((stepEnd[k] as number) - (stepEnd[prevDecode] as number));
        counts.push(active - fresh);
      }
      pending = [];
      prevDecode = k;
    } else if ((firstsAt[k] as number) > 0) {
      pending.push(k);
    }
  }
  return weightedMedian(values, counts);
}

/** Open loops (openRequests' per-request timelines): each request's gaps between the steps it emitted in. */
function openGapMedian(trace: ReplayTrace, dt: Float64Array): number {
  const gaps: number[] = [];
  for (const q of trace.requests) {
    let since = 0;
    for (let k = q.first + 1; k <= q.last; k++) {
      since += dt[k] as number;
      if (hasDecodes(trace, k)) {
        gaps.push(since);
        since = 0;
      }
    }
  }
  return gaps.length ? quantile(Float64Array.from(gaps).sort(), 0.5) : NaN;
}

/**
 * Open loops, request by request: the arrival is fixed, the wait for a step scales with the step it waited on, and
 * from its first step on the engine runs back to back (it is never idle while it holds a request). Re-timing the
 * whole run from frozen batches instead would pile every extra millisecond of a busy engine onto all later
 * requests, where a slower engine would batch more and keep up.
 */
function openRequests(trace: ReplayTrace, dt: Float64Array, ingestMs: number, egressMs: number) {
  return trace.requests.map((q) => {
    let t = q.sentAt + ingestMs + (q.start > 0 ? q.waitSteps * (dt[q.start - 1] as number) : 0);
    for (let k = q.start; k <= q.first; k++) t += dt[k] as number;
    const first = t + egressMs;
    for (let k = q.first + 1; k <= q.last; k++) t += dt[k] as number;
    return { sent: q.sentAt, first, end: t + egressMs, out: q.outputTokens, prompt: q.promptTokens };
  });
}

function summarize(recs: { sent: number; first: number; end: number; out: number; prompt: number }[], gaps: () => number): StageSummary {
  const records = recs.map((q) => ({
    status: 'ok', warmup: false, sentAtMs: q.sent, endAtMs: q.end, outputTokens: q.out, promptTokens: q.prompt,
    requestedPromptTokens: q.prompt, requestedOutputTokens: q.out, ttftMs: q.first - q.sent, e2eMs: q.end - q.sent,
    ...(q.out > 1 ? { itlMs: (q.end - q.first) / (q.out - 1) } : {}),
  })) as unknown as RequestRecord[];
  return summarizeRecords(records, gaps);
}

/** Which replay a scenario admits: request-limited stages without a window or an in-flight cap. */
export function replayMode(sc: SeedScenario): ReplayMode | undefined {
  const s = sc.stage;
  if (s.window || s.limits.maxRequests === undefined || s.limits.maxSeconds !== undefined) return undefined;
  if (s.kind === 'burst') return s.maxConcurrency === undefined ? 'burst' : undefined;
  if (s.kind === 'closed') return s.concurrency === 1 ? 'serial' : 'closed';
  if (s.kind === 'open') return s.maxConcurrency === undefined && s.arrival !== 'trace' ? 'open' : undefined;
  return undefined;
}

/** Each request's first-chunk step: the j-th fresh prompt chunk (prior 0) of the run is the j-th request to arrive. */
function promptStarts(list: BatchSummary[]): number[] {
  const starts: number[] = [];
  list.forEach((b, k) => {
    for (let i = 0; i < b.prefillCount; i++) if ((b.prefillPrior[i] ?? 0) === 0) starts.push(k);
  });
  return starts;
}

/**
 * Simulate the scenario once under `cal`, recording its steps; returns the trace when replaying it reproduces
 * the simulation (relative difference ≤ 1e-6 on every figure), with the simulated summary.
 */
export function recordReplay(sc: SeedScenario, cal: Calibration): { trace?: ReplayTrace; summary: StageSummary } {
  const resolved = resolveSimEngine({ ...sc.engine, calibration: cal });
  const mode = replayMode(sc);
  if (!mode) {
    const r = runVirtualStage(resolved, sc.stage, 0, 0, 0, 1);
    return { summary: summarizeRecords(r.result.records) };
  }
  const inner = resolved.config.cost;
  const list: BatchSummary[] = [];
  const recording = Object.create(inner) as StepCostModel;
  recording.stepMs = (b: BatchSummary): number => {
    list.push({ ...b, prefillPrior: b.prefillPrior.slice(0, b.prefillCount), prefillTokens: b.prefillTokens.slice(0, b.prefillCount) });
    return inner.stepMs(b);
  };
  const run = runVirtualStage({ ...resolved, config: { ...resolved.config, cost: recording } }, sc.stage, 0, 0, 0, 1);
  const records = run.result.records;
  const summary = summarizeRecords(records);
  if (records.some((r) => r.status !== 'ok' || r.firstTokenAtMs === undefined) || resolved.config.noiseSigma > 0 || resolved.config.timeScale !== 1) {
    return { summary };
  }
  // Requests in arrival order (sent + a constant ingest; ties in send order). A preempted request's recompute
  // starts another fresh chunk, and then the counts differ: such a run is simulated at every trial.
  const byArrival = [...records].sort((a, b) => a.sentAtMs - b.sentAtMs || a.id - b.id);
  // A burst's requests are all waiting before the first step: no step waits for one (preemptions included).
  const starts = mode === 'burst' ? byArrival.map(() => 0) : promptStarts(list);
  if (starts.length !== byArrival.length) return { summary };
  const { steps, offsets } = flatten(list);
  const trace: ReplayTrace = { mode, exact: mode === 'burst' || mode === 'serial', steps, offsets, requests: [] };
  // Closed loops: a request is sent when the one it follows ends (several ending together: any pairing times alike).
  const endedAt = new Map<number, number[]>();
  const index = new Map<number, number>();
  byArrival.forEach((r, j) => {
    index.set(r.id, j);
    const ids = endedAt.get(r.endAtMs) ?? [];
    ids.push(r.id);
    endedAt.set(r.endAtMs, ids);
  });
  const { ingestMs, egressMs } = resolved.config;
  const closedLoop = mode === 'closed' || mode === 'serial';
  const initial = closedLoop && sc.stage.kind === 'closed' ? sc.stage.concurrency : Infinity;
  byArrival.forEach((r, j) => {
    let pred = -1;
    if (closedLoop && j >= initial) {
      const id = endedAt.get(r.sentAtMs)?.shift();
      if (id === undefined) return;
      pred = index.get(id) ?? -1;
    }
    trace.requests.push({
      start: starts[j] as number, first: 0, last: 0, sentAt: r.sentAtMs, pred, waitSteps: 0,
      outputTokens: r.outputTokens, promptTokens: r.promptTokens,
    });
  });
  if (trace.requests.length !== byArrival.length) return { summary };
  // First and last token steps: the steps whose end (re-timed under the recording calibration) the tokens left after.
  const dt0 = stepDurations(trace, inner);
  const { stepEnd } = retime(trace, dt0, ingestMs, egressMs, true);
  const stepAt = (time: number): number => {
    let lo = 0;
    let hi = stepEnd.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((stepEnd[mid] as number) < time - 1e-6) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  byArrival.forEach((r, j) => {
    const q = trace.requests[j] as ReplayRequest;
    q.first = stepAt((r.firstTokenAtMs as number) - egressMs);
    q.last = stepAt(r.endAtMs - egressMs);
    if (q.start > 0) {
      const wait = (stepEnd[q.start - 1] as number) - (r.sentAtMs + ingestMs);
      q.waitSteps = Math.max(0, wait) / (dt0[q.start - 1] as number);
    }
  });
  const check = replaySummary(trace, resolved);
  const same = (Object.keys(summary) as (keyof StageSummary)[]).every((k) => {
    const a = summary[k];
    const b = check[k];
    return (Number.isNaN(a) && Number.isNaN(b)) || Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a));
  });
  return same ? { trace, summary } : { summary };
}
