/**
 * A measured run folder as the calibration sees it: each row's load rebuilt as a stage the simulator can run in
 * virtual time (same kind, streams, target rate, in-flight cap, limits and lengths), next to the figures the row
 * measured.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { configError } from '../../core/errors.js';
import { rowFirstRequestId } from '../../load/benchmark.js';
import { DEFAULT_THROUGHPUT_CONCURRENCY, windowRulesFor } from '../../load/profiles.js';
import type { ArrivalKind, StageLimits, StageSpec } from '../../load/types.js';
import { onCurve, type StageSummary } from '../../metrics/summary.js';
import { openRunDir, type StoredRun } from '../../store/run-store.js';
import { type LengthDist, parseLengthDist, parseScenario } from '../../workload/lengths.js';
import { createLengthsWorkload } from '../../workload/synthetic.js';
import type { Workload } from '../../workload/types.js';

/** The run options a manifest keeps that matter for re-predicting its rows (a subset of RunOptions, as JSON). */
interface ManifestOptions {
  profile?: string;
  promptTokens?: number;
  outputTokens?: number;
  maxRequests?: number;
  maxSeconds?: number;
  warmupSeconds?: number;
  numPrompts?: number;
  arrival?: ArrivalKind;
  burstiness?: number;
  maxConcurrency?: number;
  seed?: number;
  gridLatencyLoad?: { kind: string; requests?: number };
  capacity?: { arrival?: ArrivalKind };
  workload?: { promptDist?: string; outputDist?: string; scenario?: string; data?: string; turns?: string; trace?: string };
}

/** The manifest fields the configuration is read from (run: target; predict: engine). */
export interface ManifestInfo {
  command?: string;
  options?: ManifestOptions;
  /** `predict` runs: the simulated engine's description. */
  engine?: { engine?: string; model?: string; gpu?: string; gpus?: number; quant?: string; kvCacheDtype?: string };
}

/** One measured row and the stage that reproduces its load. */
export interface MeasuredRow {
  label: string;
  spec: StageSpec;
  /** Run-wide id of the row's first request (where in the workload it starts). */
  firstRequestId: number;
  /** Seeds the row's arrivals as the run seeded them, so a Poisson row is re-predicted on the same arrival times. */
  seed: number;
  measured: StageSummary;
  /** Which of several --calibrate-from runs it came from (0 for a single run). */
  runIndex?: number;
}

export interface MeasuredRun {
  dir: string;
  run: StoredRun;
  manifest: ManifestInfo;
  /** Rows that stand on the curve (successes, kept up with their load): the ones fitted and scored. */
  rows: MeasuredRow[];
  /** Lines worth printing: how the workload was rebuilt, rows left out. */
  notes: string[];
}

/** Reads a run folder for calibration or validation; every way it can be unusable is one line (exit 2). */
export function loadMeasuredRun(runDir: string): MeasuredRun {
  const dir = resolve(runDir);
  if (!existsSync(dir)) throw configError(`run folder ${runDir} does not exist`, 'pass a folder written by `inferbench run --out DIR`, or a run id from `inferbench ls`');
  if (!statSync(dir).isDirectory() || !existsSync(join(dir, 'summary.json'))) {
    throw configError(`${runDir} has no summary.json: not a finished inferbench run folder`, 'pass a folder written by `inferbench run --out DIR`');
  }
  const run = openRunDir(dir);
  const manifest = readManifest(dir);
  const o = manifest.options ?? {};
  const notes: string[] = [];
  const withOk = run.summary.stages.filter((s) => s.requests.ok > 0);
  if (withOk.length === 0) throw configError(`${runDir}: no row has a successful request, so there is nothing to fit to`, 'measure the deployment again with `inferbench run`');
  const fixedLengths = !(o.workload?.data || o.workload?.turns || o.workload?.trace) && manifest.options !== undefined;
  if (!fixedLengths) notes.push(`${runDir}: prompts from a dataset, conversation or trace (or no manifest): each row is re-predicted with its measured mean prompt and output lengths`);
  const rows: MeasuredRow[] = [];
  let nextId = 0;
  for (const s of run.summary.stages) {
    // The ids (and synthetic prompts) the run gave this row: its fixed base (load/benchmark.ts).
    const firstRequestId = rowFirstRequestId(s.index, 0, 1, nextId);
    nextId = firstRequestId + s.requests.total;
    if (!onCurve(s)) continue;
    const spec = rowSpec(s, o, fixedLengths ? workloadFor(o, s) : meanLengthWorkload(s, o.seed ?? 42));
    // `run` and `predict` share one load driver: row i's arrivals are seeded with seed + i (load/stage-driver.ts).
    const seed = (o.seed ?? 42) + s.index;
    rows.push({ label: s.label, spec, firstRequestId, seed, measured: s });
  }
  const left = withOk.length - rows.length;
  if (rows.length === 0) throw configError(`${runDir}: every row with successes was overloaded (belowTarget), so none stands on the latency curve to fit to`, 'measure lower loads too, e.g. a sweep');
  if (left > 0) notes.push(`${runDir}: ${left} overloaded row${left > 1 ? 's' : ''} left out (not on the curve)`);
  return { dir, run, manifest, rows, notes };
}

function readManifest(dir: string): ManifestInfo {
  const path = join(dir, 'manifest.json');
  if (!existsSync(path)) return {};
  try {
    const m = JSON.parse(readFileSync(path, 'utf8')) as ManifestInfo;
    return typeof m === 'object' && m !== null ? m : {};
  } catch {
    // openRunDir already warns about an unreadable manifest; the rows then use their measured lengths.
    return {};
  }
}

/** The workload the run's flags described (grid cells: the cell's lengths). */
function workloadFor(o: ManifestOptions, s: StageSummary): Workload {
  const seed = o.seed ?? 42;
  if (s.grid) return createLengthsWorkload({ kind: 'fixed', value: s.grid.input }, { kind: 'fixed', value: s.grid.output }, seed);
  const w = o.workload ?? {};
  let prompt: LengthDist;
  let output: LengthDist;
  if (w.scenario) ({ prompt, output } = parseScenario(w.scenario));
  else {
    prompt = w.promptDist ? parseLengthDist(w.promptDist, '--prompt-dist') : { kind: 'fixed', value: o.promptTokens ?? 512 };
    output = w.outputDist ? parseLengthDist(w.outputDist, '--output-dist') : { kind: 'fixed', value: o.outputTokens ?? 128 };
  }
  return createLengthsWorkload(prompt, output, seed);
}

function meanLengthWorkload(s: StageSummary, seed: number): Workload {
  const mean = (m: 'promptTokens' | 'outputTokens'): number => Math.max(1, Math.round(s.metrics[m]?.mean ?? 1));
  return createLengthsWorkload({ kind: 'fixed', value: mean('promptTokens') }, { kind: 'fixed', value: mean('outputTokens') }, seed);
}

/** The stage that puts the row's load on the simulator again: nextStage() of profiles.ts, read back from the row. */
function rowSpec(s: StageSummary, o: ManifestOptions, workload: Workload): StageSpec {
  const runLimits: StageLimits = {
    ...(o.maxRequests !== undefined ? { maxRequests: o.maxRequests } : {}),
    ...(o.maxSeconds !== undefined ? { maxSeconds: o.maxSeconds } : {}),
    ...(o.warmupSeconds !== undefined ? { warmupSeconds: o.warmupSeconds } : {}),
  };
  if (runLimits.maxRequests === undefined && runLimits.maxSeconds === undefined) runLimits.maxSeconds = 5;
  const cap = o.maxConcurrency;
  const base = { label: s.label, workload, ...(s.grid ? { grid: s.grid } : {}) };
  if (s.grid?.role === 'throughput') {
    return { ...base, kind: 'burst', limits: { maxRequests: o.numPrompts ?? s.requests.total }, ...(cap !== undefined ? { maxConcurrency: cap } : {}) };
  }
  const limits = s.grid ? { maxRequests: o.gridLatencyLoad?.requests ?? 10 } : runLimits;
  if (s.kind === 'closed') {
    const window = windowRulesFor('closed', limits);
    return { ...base, kind: 'closed', concurrency: s.concurrency ?? 1, limits, ...(window ? { window } : {}) };
  }
  if (s.kind === 'open') {
    const window = windowRulesFor('open', limits);
    const arrival: ArrivalKind = s.grid ? 'constant' : o.profile === 'constant' || o.profile === 'poisson' ? o.profile : (o.capacity?.arrival ?? o.arrival ?? 'constant');
    return {
      ...base, kind: 'open', limits, ...(window ? { window } : {}),
      rate: s.targetRate ?? s.sendRate,
      // A replayed trace is re-predicted as its mean rate with constant gaps.
      arrival: arrival === 'trace' ? 'constant' : arrival,
      ...(o.burstiness !== undefined ? { burstiness: o.burstiness } : {}),
      ...(cap !== undefined ? { maxConcurrency: cap } : {}),
    };
  }
  // A throughput row, built as nextStage() builds it: a row that searched its in-flight cap searches it again (the
  // ramp decides which requests the window holds, and so the row's TTFT).
  const window = windowRulesFor('burst', limits, cap !== undefined ? { cap } : {});
  const maxConcurrency = cap ?? (limits.maxRequests === undefined ? DEFAULT_THROUGHPUT_CONCURRENCY : undefined);
  return { ...base, kind: 'burst', limits, ...(window ? { window } : {}), ...(maxConcurrency !== undefined ? { maxConcurrency } : {}) };
}
