import { relative } from 'node:path';
import { configError } from '../core/errors.js';
import { mismatchText, runMismatches } from '../report/comparability.js';
import type { StoredRun } from '../store/run-store.js';
import { decideCapacity } from './capacity.js';
import { decideRow, RESAMPLES, type GateCheck, type GateVerdict } from './decide.js';
import { poolSides, readRunRows } from './samples.js';
import type { Threshold } from './thresholds.js';

/** What `inferbench gate` decided (gate.json is this document). */
export interface GateReport {
  verdict: GateVerdict;
  /** 0 all pass, 1 any fail, 3 inconclusive and nothing failed (0 or 1 with --inconclusive pass|fail). */
  exitCode: number;
  inconclusiveAs?: 'pass' | 'fail';
  baseline: string[];
  candidate: string[];
  checks: GateCheck[];
  /** Metrics or rows that could not be judged, and why. */
  skipped: string[];
  /** Rows of one side with no row of the same load on the other. */
  unmatched: string[];
  confidence: number;
  resamples: number;
  seed: number;
}

export interface GateOptions {
  thresholds: readonly Threshold[];
  /** How an inconclusive gate exits: absent = exit 3. */
  inconclusive?: 'pass' | 'fail';
  seed?: number;
  /** Gate runs that differ in model, workload, profile or window rules anyway. */
  allowMismatch?: boolean;
}

/** Refuses runs that do not measure the same thing, as `compare` refuses them. */
export function checkComparable(baseline: readonly StoredRun[], candidate: readonly StoredRun[], allowMismatch: boolean): string[] {
  const mismatches = runMismatches([...baseline, ...candidate]).map(mismatchText);
  if (mismatches.length > 0 && !allowMismatch) {
    throw configError(
      `these runs are not comparable — they differ in ${mismatches.join('; ')}`,
      'gate runs of one model, workload, profile and window rules (engines, GPUs and quantization may differ), or pass --allow-mismatch',
    );
  }
  return mismatches;
}

/** A stable seed from the runs' ids: the same runs give the same intervals on every machine. */
function seedOf(runs: readonly StoredRun[]): number {
  let h = 2166136261;
  for (const ch of runs.map((r) => r.id).join(',')) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  return h;
}

export async function gateRuns(baseline: readonly StoredRun[], candidate: readonly StoredRun[], opts: GateOptions): Promise<GateReport> {
  const mismatches = checkComparable(baseline, candidate, opts.allowMismatch === true);
  const seed = opts.seed ?? seedOf([...baseline, ...candidate]);
  const checks: GateCheck[] = [];
  const skipped: string[] = mismatches.map((m) => `WARNING: the runs differ in ${m} (--allow-mismatch)`);
  const unmatched: string[] = [];
  const capacityRuns = [...baseline, ...candidate].some((r) => r.summary.capacity !== undefined);
  if (!capacityRuns) {
    const base = poolSides(await Promise.all(baseline.map(readRunRows)));
    const cand = poolSides(await Promise.all(candidate.map(readRunRows)));
    let i = 0;
    for (const [key, b] of base) {
      const c = cand.get(key);
      if (!c) {
        unmatched.push(`baseline row ${b.label}: no candidate row at the same load`);
        continue;
      }
      const row = decideRow(b, c, opts.thresholds, (seed + 7919 * i++) >>> 0);
      checks.push(...row.checks);
      skipped.push(...row.skipped);
    }
    for (const [key, c] of cand) if (!base.has(key)) unmatched.push(`candidate row ${c.label}: no baseline row at the same load`);
    if (base.size === 0 || cand.size === 0) {
      skipped.push(`no measured requests to resample in ${base.size === 0 ? 'the baseline' : 'the candidate'} (requests.jsonl missing or empty: a run with --records none cannot be gated)`);
    }
  }
  const capacity = opts.thresholds.find((t) => t.metric.kind === 'capacity');
  if (capacity && capacityRuns) {
    const c = decideCapacity(baseline, candidate, capacity);
    if (c.check) checks.push(c.check);
    if (c.skipped) skipped.push(c.skipped);
  }
  if (checks.length === 0) {
    throw configError(
      `nothing to gate: ${[...unmatched, ...skipped].join('; ') || 'no row of the baseline matches a row of the candidate'}`,
      'gate runs of the same loads (the same --rate, --concurrency or grid cells) whose requests.jsonl were kept',
    );
  }
  // Folder names alone when they tell the runs apart (base/run-1 and cand/run-1 do not: then their paths).
  const names = [...baseline, ...candidate].map((r) => r.name);
  const nameOf = (r: StoredRun): string => (new Set(names).size === names.length ? r.name : relative(process.cwd(), r.dir) || r.dir);
  const verdict: GateVerdict = checks.some((c) => c.verdict === 'fail') ? 'fail' : checks.some((c) => c.verdict === 'inconclusive') ? 'inconclusive' : 'pass';
  const exitCode = verdict === 'pass' ? 0 : verdict === 'fail' ? 1 : opts.inconclusive === 'pass' ? 0 : opts.inconclusive === 'fail' ? 1 : 3;
  return {
    verdict,
    exitCode,
    ...(opts.inconclusive ? { inconclusiveAs: opts.inconclusive } : {}),
    baseline: baseline.map(nameOf),
    candidate: candidate.map(nameOf),
    checks,
    skipped,
    unmatched,
    confidence: 0.95,
    resamples: RESAMPLES,
    seed,
  };
}
