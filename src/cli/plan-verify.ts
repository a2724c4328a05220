/**
 * `plan --verify N` wiring: the server source, the verify folder, Ctrl-C, and the run path that measures each
 * candidate (`inferbench run` parsed and resolved by run's own flags, run by runCommand). src/verify does the rest.
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunOptions } from '../config/run-options.js';
import { configError } from '../core/errors.js';
import type { PlanResult } from '../plan/types.js';
import { DEFAULT_RESULTS_DIR } from '../store/run-store.js';
import { defaultRunDir } from '../store/run-writer.js';
import { capacityFactors, saveVerifiedCalibration } from '../verify/calibration.js';
import { renderVerification } from '../verify/render.js';
import { checkTemplate } from '../verify/server-command.js';
import type { MeasureCapacity, ServerCommandSource, VerifyResult } from '../verify/types.js';
import { verifyPlan, writeVerifyFile } from '../verify/verify.js';
import type { PlanOptions, PlanVerifyOptions } from './plan-options.js';
import { runCommand } from './run-command.js';
import { parseRunFlags } from './run-args-parse.js';

/** The CLI itself, to start `inferbench sim` as a candidate: this node (and its flags, e.g. tsx's loader) and this entry. */
function selfArgv(): string[] {
  const entry = process.argv[1] ? resolve(process.argv[1]) : fileURLToPath(new URL('../../bin/inferbench.js', import.meta.url));
  return [process.execPath, ...process.execArgv, entry];
}

/** `--server-cmd`: sim, launch, or a template (its placeholders checked before the plan runs). */
export function serverSource(v: PlanVerifyOptions, opts: PlanOptions): ServerCommandSource {
  if (v.serverCmd === 'sim') return { kind: 'sim', argv: selfArgv(), catalogFiles: opts.job.catalogFiles.map((f) => resolve(f)), seed: opts.job.seed };
  if (v.serverCmd === 'launch') return { kind: 'launch' };
  checkTemplate(v.serverCmd);
  if (!v.serverCmd.includes('{port}')) throw configError(`--server-cmd "${v.serverCmd}" has no {port}`, 'each candidate is started on a free port: put {port} where the server takes its port (e.g. --port {port})');
  return { kind: 'template', template: v.serverCmd };
}

/** Parses `run`'s flags with run's own option table and resolves them with run's rules (as `inferbench k8s` does). */
function parseRunArgs(args: readonly string[]): RunOptions {
  return parseRunFlags(args, { what: "plan --verify's run flags" }).opts;
}

/** Each measurement is one `inferbench run`: its table and progress go to stderr, stdout keeps the plan's answer. */
const measureWithRun: MeasureCapacity = async (args) => {
  const opts = parseRunArgs(args);
  const outcome = await runCommand(opts, { stdout: process.stderr, stderr: process.stderr });
  const doc = outcome.doc;
  return { exitCode: outcome.exitCode, ...(doc?.capacity ? { capacity: doc.capacity } : {}), interrupted: doc?.interrupted === true || outcome.exitCode === 130 };
};

export interface VerifyOutcome {
  result: VerifyResult;
  text: string;
  exitCode: number;
}

/**
 * Launches and measures; returns the verification and its exit code: 0 when every candidate was measured, 1 when any
 * could not be (failed to start, never ready, the run failed, or no load met the SLO), 130 after Ctrl-C.
 */
export async function runPlanVerify(plan: PlanResult, opts: PlanOptions, source: ServerCommandSource, human: NodeJS.WritableStream, measure: MeasureCapacity = measureWithRun): Promise<VerifyOutcome> {
  const v = opts.verify as PlanVerifyOptions;
  const now = new Date();
  const dir = resolve(opts.out ? join(opts.out, 'verify') : defaultRunDir(DEFAULT_RESULTS_DIR, 'plan-verify', now));
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let result: VerifyResult;
  try {
    result = await verifyPlan(
      plan,
      { count: v.count, server: source, readyTimeoutMs: v.readyTimeoutMs, stopTimeoutMs: v.stopTimeoutMs, dir, runArgs: v.runArgs, precisionPct: v.precisionPct },
      { measure, say: (line) => void human.write(`${line}\n`), signal: abort.signal, ...(opts.job.kvCacheDtype ? { kvCacheDtype: opts.job.kvCacheDtype } : {}) },
    );
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  if (v.saveCalibration) {
    const factors = capacityFactors(result.entries, plan, opts.job.kvCacheDtype, now);
    if (factors.length > 0) {
      saveVerifiedCalibration(v.saveCalibration, opts.job.calibration, factors, now);
      result.savedCalibration = v.saveCalibration;
    } else {
      result.notes.push(`--save-calibration ${v.saveCalibration}: nothing was measured, nothing written`);
    }
  }
  const kind = source.kind === 'sim' ? 'inferbench sim' : source.kind === 'launch' ? 'the launch commands' : '--server-cmd template';
  const text = renderVerification(result, { serverKind: kind });
  writeVerifyFile(dir, result);
  writeFileSync(join(dir, 'verify.md'), text);
  const exitCode = result.interrupted ? 130 : result.entries.every((e) => e.status === 'ok') ? 0 : 1;
  return { result, text, exitCode };
}
