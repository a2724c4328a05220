import { describeWindowRules, shortWindowRules } from './window-rules.js';
import { resolve } from 'node:path';
import type { RunOptions } from '../config/run-options.js';
import type { StageSummary } from '../metrics/summary.js';
import { executeRunPlan } from '../runplan/execute.js';
import { resolveRunPlan } from '../runplan/resolve.js';
import { virtualPlanRunner } from '../runplan/runners.js';
import { renderCsvReport, renderMarkdownReport, renderTerminalReport, type RunSummaryDoc } from '../report/run-summary.js';
import { parseColumns } from '../report/columns.js';
import { terminalStyle } from '../report/terminal.js';
import { workloadSpecOf } from './workload-spec.js';
import { resolveSimEngine } from '../sim/create.js';
import type { SpecDecode } from '../sim/engine/spec-decode.js';
import type { SlotOptions } from './llamacpp-flags.js';
import { createVirtualStageRunner } from '../sim/virtual-runner.js';
import { ROUTER_POLICIES, type RouterPolicy } from '../sim/cluster/router.js';
import { configError } from '../core/errors.js';
import { describePd, type PdSplit } from '../sim/cluster/pd.js';

/** `predict --replicas N --router P`: the cluster `sim --replicas` serves, in virtual time (one line for a bad value). */
export function readClusterFlags(flags: Record<string, unknown>): { cluster?: { replicas: number; router: RouterPolicy } } {
  const raw = flags['replicas'];
  const router = flags['router'];
  if (raw === undefined) {
    if (router !== undefined) throw configError('--router picks among several engines; give --replicas N too');
    return {};
  }
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw configError(`--replicas ${String(raw)}: give a whole number of engines from 1 to 64`);
  const policy = (router ?? 'round-robin') as RouterPolicy;
  if (!ROUTER_POLICIES.includes(policy)) throw configError(`--router ${String(router)}: one of ${ROUTER_POLICIES.join(', ')}`);
  return n > 1 ? { cluster: { replicas: n, router: policy } } : {};
}
import { checkSimLimits } from './sim-limits.js';
import { writeRunFolder } from '../store/run-folder.js';
import { setupPredictWorkload } from '../runplan/workload-setup.js';
import { checkOutputDir } from './preflight.js';
import { claimRunFolder } from '../store/run-lock.js';
import { DEFAULT_SIM } from './defaults.js';
import { gridDescription, lengthContext } from '../runplan/profile-config.js';
import { toolVersion } from './version.js';
import { applyCalibrationFlags, type CalibrationFlags } from './calibration-flags.js';
import { capacityFailed, capacityField } from './capacity-answer.js';
import { dropIdenticalRepeats } from './run-outcome.js';
import { capacityFactorFor } from '../plan/capacity-factor.js';
import type { Calibration } from '../sim/calibrate/types.js';
import type { KvCacheDtype, QuantName } from '../sim/catalog/types.js';
import { attachStageIntervals, capacityInterval, capacityIntervalLine, intervalBasis } from './prediction-intervals.js';
import { DEFAULT_INTERVAL_LEVEL, noIntervalReason } from '../sim/calibrate/predict-intervals.js';

/** Where the constants of an uncalibrated prediction come from. */
function constantsNote(d: { calibrated: boolean; hardwareCalibrated: boolean; gpu: string }): string {
  const hw = d.hardwareCalibrated ? 'hardware constants fitted on the seed and public tables' : `${d.gpu}'s efficiencies are priors (no published data fitted; --calibrate-from RUN fits them)`;
  return d.calibrated ? `engine and ${hw}` : `${hw}, engine host/API constants are priors (no published data for this engine)`;
}

/**
 * The KV cache the prediction modelled. llama-server allocates its -c tokens, whatever the memory: without --ctx-size
 * the simulator's figure is what the memory would hold (3,705,776 tokens on a CPU's assumed 64 GiB, for a server
 * started with -c 4096), which describes no server; say where the figure would come from instead.
 */
function kvCacheText(d: { engine: string; kvTokens: number; kvBlocks: number; kvCacheDtype: string }, ctxSize: number | undefined): string {
  if (d.engine === 'llamacpp' && ctxSize === undefined) return "KV cache not limited (llama-server's -c sets it: give it as --ctx-size N)";
  return `KV cache ${d.kvTokens} tokens${d.kvCacheDtype !== 'auto' ? ` ${d.kvCacheDtype}` : ''} (${d.kvBlocks} blocks)`;
}

/** What the intervals in parentheses are, under the table. */
function intervalNote(basis: NonNullable<ReturnType<typeof intervalBasis>>): string {
  const L = Math.round(basis.level * 1000) / 10;
  if (basis.kind === 'calibration') return `(low–high): ${L}% prediction intervals from the calibration's own spread on the measured runs and its constants' standard error (docs/accuracy.md)`;
  const unseen = basis.unseen.length ? `; no published table covers this ${basis.unseen.join(', ')}: widened to the out-of-family residuals` : '';
  return `(low–high): ${L}% prediction intervals from leave-one-table-out residuals of the published tables, per metric family and load${unseen}; an interval beside its prediction rather than around it means the simulator ran high (or low) on held-out figures of that kind (docs/accuracy.md; --interval-level, --calibrate-from RUN[,RUN…] narrows them)`;
}

/** `inferbench predict`: the same profiles and tables as `run`, answered by the simulator in virtual time. */
export async function predictCommand(
  opts: RunOptions,
  io: { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream },
  calibrationFlags?: CalibrationFlags,
  features: { specDecode?: SpecDecode; slots?: SlotOptions; cluster?: { replicas: number; router: RouterPolicy }; pd?: PdSplit } = {},
): Promise<{ doc: RunSummaryDoc; exitCode: number }> {
  const human = opts.json ? io.stderr : io.stdout;
  if (opts.columns) parseColumns(opts.columns.join(','));
  if (opts.out) checkOutputDir(opts.out, '--out');
  // One run per folder, said before the prediction runs (and held again while its files are written).
  if (opts.out) claimRunFolder(resolve(opts.out), { flag: '--out', shown: opts.out, command: 'predict' })?.release();
  // --calibrate-from/--calibration: the run's configuration and fitted constants (calibration-flags.ts).
  const calibrated = applyCalibrationFlags({
    engine: opts.engine ?? DEFAULT_SIM.engine,
    model: opts.model ?? DEFAULT_SIM.model,
    gpu: opts.gpu ?? DEFAULT_SIM.gpu,
    gpus: opts.gpus ?? DEFAULT_SIM.gpus,
    seed: opts.seed,
    ...(opts.quant ? { quant: opts.quant } : {}),
    ...(opts.kvCacheDtype ? { kvCacheDtype: opts.kvCacheDtype } : {}),
    ...features.slots,
  }, calibrationFlags, human);
  const engineOptions = { ...calibrated.engine, ...(features.specDecode ? { specDecode: features.specDecode } : {}) };
  const started = performance.now();
  const pd = features.pd ? { pd: features.pd } : {};
  const runner = createVirtualStageRunner(engineOptions, { seed: opts.seed, drainMs: opts.drainSeconds * 1000, ...(features.cluster ? { cluster: features.cluster } : {}), ...pd });
  if (features.pd && runner.pdLink) human.write(`${describePd(features.pd, runner.pdLink, runner.description.gpus)} (as inferbench sim --pd serves them)\n`);
  if (features.cluster) human.write(`cluster: ${features.cluster.replicas} replicas behind a ${features.cluster.router} router, each with its own KV and prefix cache (as inferbench sim --replicas serves them)\n`);
  const d = runner.description;
  // Lengths the engine refuses outright exit 2 here; an over-long context is one warning line.
  for (const line of checkSimLimits(opts, resolveSimEngine(engineOptions))) io.stderr.write(`${line}\n`);
  const { workload, workloadFor } = await setupPredictWorkload(opts);
  // The same plan `run` resolves, with the simulated engine as its target, run in virtual time.
  const plan = resolveRunPlan(opts, {
    toolVersion: toolVersion(),
    sim: { engine: d.engine, model: d.model, gpu: d.gpu, gpus: d.gpus, quant: d.quant, kvCacheDtype: d.kvCacheDtype },
    server: { dialect: 'virtual', model: d.model, engine: d.engine },
    tokenizer: { kind: 'none', name: 'none (the simulator takes token counts)' },
    workloadDescription: workload.description,
  });
  // Each row's energy from the simulator's power model over the row's window (sim/engine/power.ts).
  const energy = { onStageEnd: (s: StageSummary): void => void (s.energy = runner.energyOf(s) ?? s.energy) };
  const result = await executeRunPlan(plan, virtualPlanRunner(runner), [energy], { prompts: { workload, workloadFor } });
  const sameRepeats = dropIdenticalRepeats(result.stages, opts.repeat);
  // Prediction intervals (--interval-level, default 80%; 0: none): every row, and the capacity answer.
  const basis = intervalBasis(engineOptions, calibrationFlags?.intervalLevel ?? DEFAULT_INTERVAL_LEVEL);
  const noInterval = noIntervalReason(engineOptions, calibrationFlags?.intervalLevel ?? DEFAULT_INTERVAL_LEVEL);
  if (basis) attachStageIntervals(result.stages, basis);
  const capacity = capacityField(opts, result.stages, false);
  if (basis && capacity.capacity) {
    const rerun = async (k: number): Promise<typeof result.stages> => {
      const scaled = createVirtualStageRunner({ ...engineOptions, modelTimeScale: (engineOptions.modelTimeScale ?? 1) * k }, { seed: opts.seed, drainMs: opts.drainSeconds * 1000, ...pd });
      return (await executeRunPlan(plan, virtualPlanRunner(scaled), [], { prompts: { workload, workloadFor } })).stages;
    };
    const interval = await capacityInterval(opts, basis, rerun);
    if (interval) capacity.capacity.interval = interval;
  }
  const elapsedMs = performance.now() - started;

  const createdAt = new Date().toISOString();
  const doc: RunSummaryDoc = {
    tool: { name: 'inferbench', version: toolVersion() },
    runId: `predict-${createdAt.replace(/[-:.]/g, '').slice(0, 15)}`,
    createdAt,
    finishedAt: new Date().toISOString(),
    layout: opts.profile === 'grid' ? 'grid' : 'sweep',
    context: {
      model: d.model,
      engine: d.engineLabel,
      gpu: d.gpu,
      gpus: d.gpus,
      quant: d.quant,
      kvCacheDtype: d.kvCacheDtype,
      predicted: true,
      ...lengthContext(opts, workload.description),
      ...(opts.label ? { label: opts.label } : {}),
    },
    target: { api: 'virtual', engine: d.engine, model: d.model, simulated: true },
    profile: opts.profile,
    workload: opts.profile === 'grid' ? gridDescription(opts) : workload.description,
    // The simulator works on token counts: there is no text, so no tokenizer.
    workloadSpec: workloadSpecOf(opts, { tokenizer: 'none (the simulator takes token counts)', forcedOutputLength: true }),
    windowRules: describeWindowRules(opts),
    stages: result.stages,
    ...capacity,
    ...(calibrated.report ? { calibration: calibrated.report } : {}),
    interrupted: false,
    notes: [
      ...(sameRepeats ? [sameRepeats] : []),
      `engine model: ${d.engineLabel}${features.specDecode ? ` with speculative decoding (${features.specDecode.k} drafts per step, ${features.specDecode.accept} accepted)` : ''}, max_model_len ${d.maxModelLen}, ${kvCacheText(d, engineOptions.ctxSize)}, max ${d.maxNumSeqs} sequences, ${calibrated.notes.length ? calibrated.notes.join('; ') : constantsNote(d)}`,
      ...measuredFactorNote(calibrated.engine.calibration, { ...d, engine: calibrated.engine.engine }, calibrated.report?.file),
      // After the engine-model line, which stays notes[0] (as before intervals).
      ...(basis ? [intervalNote(basis)] : []),
      ...(noInterval ? [noInterval] : []),
      ...(capacity.capacity?.interval ? [capacityIntervalLine(capacity.capacity.interval, capacity.capacity.unit)] : []),
    ],
  };
  if (opts.out) {
    const lock = claimRunFolder(resolve(opts.out), { flag: '--out', shown: opts.out, command: 'predict' });
    try {
      doc.outDir = resolve(opts.out);
      writeRunFolder(doc.outDir, {
        manifest: { tool: doc.tool, createdAt, command: 'predict', options: opts, engine: d, plan },
        summary: doc,
        records: result.results.flatMap((r) => r.records),
        files: { 'table.md': renderMarkdownReport(doc), 'table.csv': renderCsvReport(doc) },
      });
    } finally {
      lock?.release();
    }
  }
  if (opts.json) {
    io.stdout.write(`${JSON.stringify({ schemaVersion: 1, ...doc }, null, 2)}\n`);
  } else {
    human.write(`${renderTerminalReport(doc, { ...(opts.columns ? { columns: opts.columns } : {}), style: terminalStyle(human) })}\n`);
    for (const n of doc.notes) human.write(`${n}\n`);
    human.write(`${shortWindowRules(opts)}\n`);
  }
  human.write(`predicted ${result.stages.length} row${result.stages.length === 1 ? '' : 's'} in ${elapsedMs.toFixed(0)} ms of CPU (virtual time)\n`);
  return { doc, exitCode: capacityFailed(doc) ? 1 : 0 };
}

/**
 * A calibration file from `plan --verify --save-calibration` may hold this deployment's measured capacity factor (its
 * engine as --engine names it, not the profile id): the plan scales by it (plan/capacity-factor.ts); predict's rows
 * stay the simulator's, and say so.
 */
function measuredFactorNote(cal: Calibration | undefined, d: { engine: string; model: string; gpu: string; gpus: number; quant: string; kvCacheDtype: string }, file: string | undefined): string[] {
  const f = capacityFactorFor({ model: d.model, ...(cal ? { calibration: cal } : {}), kvCacheDtype: d.kvCacheDtype as KvCacheDtype }, { engine: d.engine, gpu: d.gpu, gpus: d.gpus, quant: d.quant as QuantName });
  if (!f) return [];
  return [`${file ?? 'the calibration file'} holds a measured capacity factor for this deployment: ×${+f.factor.toFixed(4)} (${f.measuredCapacity} req/s measured, ${f.simulatedCapacity} simulated, under ${f.slo}; plan --verify, ${f.measuredAt.slice(0, 10)}): plan --calibration scales this deployment's capacity by it, these rows are the simulator's`];
}
