/**
 * Re-costing a recorded schedule. For an all-at-once burst, and for one request at a time, the engine's
 * scheduling decisions do not depend on how long a step takes (every request is already waiting, or the engine
 * is alone with one): only the step durations change with the calibration. So the fit simulates such a
 * scenario once, keeps every step's batch, and afterwards only re-prices the steps — milliseconds instead of
 * seconds for a 3,000-request burst. A replay is used only when, under the recording calibration, it
 * reproduces the full simulation's figures (checked at recording time); otherwise the scenario is simulated.
 */
import type { StepCostModel, BatchSummary } from '../cost/step-cost.js';
import { type ResolvedSimEngine, resolveSimEngine } from '../create.js';
import type { RequestRecord } from '../../metrics/record.js';
import { runVirtualStage } from '../virtual-runner.js';
import { type SeedScenario, type StageSummary, summarizeRecords } from '../seed-compare.js';
import type { Calibration } from './types.js';

interface ReplayRequest {
  /** Step indexes of the first and the last token. */
  first: number;
  last: number;
  /** Serial mode: the request's first step. */
  start: number;
  outputTokens: number;
  promptTokens: number;
}

export interface ReplayTrace {
  mode: 'burst' | 'serial';
  /** Flattened steps: decodeSeqs, decodeCtxSum, emittingSeqs, prefillCount, then prefillCount × (prior, tokens). */
  steps: Float64Array;
  offsets: Uint32Array;
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

/** The stage summary a replay gives under a resolved engine (its cost model, ingest and egress times). */
export function replaySummary(trace: ReplayTrace, r: ResolvedSimEngine): StageSummary {
  const dt = stepDurations(trace, r.config.cost);
  const { ingestMs, egressMs } = r.config;
  const cum = new Float64Array(dt.length + 1);
  for (let k = 0; k < dt.length; k++) cum[k + 1] = (cum[k] as number) + (dt[k] as number);
  const recs: { sent: number; first: number; end: number; out: number; prompt: number }[] = [];
  if (trace.mode === 'burst') {
    for (const q of trace.requests) {
      recs.push({ sent: 0, first: ingestMs + (cum[q.first + 1] as number) + egressMs, end: ingestMs + (cum[q.last + 1] as number) + egressMs, out: q.outputTokens, prompt: q.promptTokens });
    }
  } else {
    let sent = 0;
    for (const q of trace.requests) {
      const base = sent + ingestMs - (cum[q.start] as number);
      const end = base + (cum[q.last + 1] as number) + egressMs;
      recs.push({ sent, first: base + (cum[q.first + 1] as number) + egressMs, end, out: q.outputTokens, prompt: q.promptTokens });
      sent = end;
    }
  }
  return summarize(recs);
}

function summarize(recs: { sent: number; first: number; end: number; out: number; prompt: number }[]): StageSummary {
  const records = recs.map((q) => ({
    status: 'ok', warmup: false, sentAtMs: q.sent, endAtMs: q.end, outputTokens: q.out, promptTokens: q.prompt,
    requestedPromptTokens: q.prompt, requestedOutputTokens: q.out, ttftMs: q.first - q.sent, e2eMs: q.end - q.sent,
    ...(q.out > 1 ? { itlMs: (q.end - q.first) / (q.out - 1) } : {}),
  })) as unknown as RequestRecord[];
  return summarizeRecords(records);
}

/** Which replay a scenario admits: bursts without a window or cap, and one-at-a-time closed loops. */
export function replayMode(sc: SeedScenario): ReplayTrace['mode'] | undefined {
  const s = sc.stage;
  if (s.window) return undefined;
  if (s.kind === 'burst' && s.maxConcurrency === undefined && s.limits.maxRequests !== undefined) return 'burst';
  if (s.kind === 'closed' && s.concurrency === 1 && s.limits.maxRequests !== undefined) return 'serial';
  return undefined;
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
  if (records.some((r) => r.status !== 'ok') || resolved.config.noiseSigma > 0 || resolved.config.timeScale !== 1) return { summary };
  const { steps, offsets } = flatten(list);
  const trace: ReplayTrace = { mode, steps, offsets, requests: [] };
  const dt = stepDurations(trace, inner);
  const ends: number[] = [];
  let t = 0;
  for (const d of dt) ends.push((t += d));
  const stepAt = (time: number): number => {
    // Burst: step k ends at ingest + ends[k]; its tokens are written egress later.
    let lo = 0;
    let hi = ends.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((ends[mid] as number) < time - 1e-6) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const { ingestMs, egressMs } = resolved.config;
  if (mode === 'burst') {
    for (const r of records) {
      trace.requests.push({
        first: stepAt((r.firstTokenAtMs ?? NaN) - ingestMs - egressMs), last: stepAt(r.endAtMs - ingestMs - egressMs), start: 0,
        outputTokens: r.outputTokens, promptTokens: r.promptTokens,
      });
    }
  } else {
    // One at a time: a request's steps start with a fresh prompt on an empty engine.
    const starts: number[] = [];
    list.forEach((b, k) => {
      if (b.decodeSeqs === 0 && b.prefillCount === 1 && (b.prefillPrior[0] ?? 0) === 0) starts.push(k);
    });
    const sorted = [...records].sort((a, b) => a.sentAtMs - b.sentAtMs);
    if (starts.length !== sorted.length) return { summary };
    sorted.forEach((r, j) => {
      const a = starts[j] as number;
      const b = (starts[j + 1] ?? list.length) - 1;
      let first = a;
      while (first < b && (list[first]?.emittingSeqs ?? 0) === 0) first++;
      trace.requests.push({ first, last: b, start: a, outputTokens: r.outputTokens, promptTokens: r.promptTokens });
    });
  }
  const check = replaySummary(trace, resolved);
  const same = (Object.keys(summary) as (keyof StageSummary)[]).every((k) => {
    const a = summary[k];
    const b = check[k];
    return (Number.isNaN(a) && Number.isNaN(b)) || Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a));
  });
  return same ? { trace, summary } : { summary };
}
