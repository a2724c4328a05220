import { resolve } from 'node:path';
import type { RunOptions } from '../config/run-options.js';
import { runKeyOf } from '../distributed/shard-run.js';
import { HealthMonitor } from '../metrics/health.js';
import type { StageSummary } from '../metrics/summary.js';
import { parseColumns } from '../report/columns.js';
import type { RunSummaryDoc } from '../report/run-summary.js';
import { executeRunPlan } from '../runplan/execute.js';
import { httpPlanRunner } from '../runplan/runners.js';
import type { RunPlan } from '../runplan/schema.js';
import { openSenders, type PlanSenders } from '../runplan/senders.js';
import { watchReplicas } from '../runplan/replica-observer.js';
import { claimDefaultRunFolder, claimRunFolder, type RunLock } from '../store/run-lock.js';
import { RunWriter, defaultRunDir } from '../store/run-writer.js';
import { TelemetrySampler } from '../transport/telemetry.js';
import { openLiveFeed, type LiveLink } from '../ui/live-setup.js';
import type { SpawnedDashboard } from '../ui/spawn-dashboard.js';
import { preflightRun } from './preflight.js';
import { Progress } from './progress.js';
import { resolveRun, type ResolvedRun } from './run-resolve.js';
import { liveObserver, progressObserver, runWriterObserver, telemetryObserver } from './run-observers.js';
import { powerObserver, startPowerSampler, writePowerSeries, type PowerReader } from './run-power.js';
import { finishRun, runSummaryDoc, writeRunManifest, type RunDocBase } from './run-results.js';
import { startShard } from './run-shard.js';
import { SIGNAL_EXIT_CODE, StartupStopped, stopOnSignals } from './run-signals.js';
import { writeRunSummary } from '../store/run-folder.js';
import { loadResumeState } from './resume.js';
import { writeSampleRequests } from './sample-requests.js';

export interface RunOutcome {
  doc?: RunSummaryDoc;
  exitCode: number;
  /** The run folder written (absent for --dry-run). */
  dir?: string;
  /** `--ui` started a dashboard for this run: the caller keeps it up (hold) until Ctrl-C. */
  dashboard?: SpawnedDashboard;
}

/** Observers a run can have besides its files (`--ui`: a live dashboard), and a saved plan to run (`--plan`). */
export interface RunExtras {
  ui?: boolean;
  /** `--dry-run`: resolve the plan (GET probes and /tokenize only), print it as JSON, send no load. */
  dryRun?: boolean;
  plan?: RunPlan;
}

/** `inferbench run`: resolve the plan, then print it (--dry-run) or execute it with the run's observers. */
export async function runCommand(opts: RunOptions, io: { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream }, extras: RunExtras = {}): Promise<RunOutcome> {
  // --dry-run's stdout is the plan: every human line goes to stderr, as with --json.
  const human = opts.json || extras.dryRun ? io.stderr : io.stdout;
  const abort = new AbortController();
  let writer: RunWriter | undefined;
  const signals = stopOnSignals(abort, io.stderr, () => writer?.flushSync());
  // After a Ctrl-C while starting, its one line is the last: the steps under way end without a word.
  const say = (line: string): void => void (signals.startup.aborted ? undefined : human.write(`${line}\n`));
  let run: ResolvedRun | undefined;
  let senders: PlanSenders | undefined;
  let live: LiveLink | undefined;
  let power: PowerReader | undefined;
  // One run per folder (store/run-lock.ts): held from before --resume trims requests.jsonl until the run ends.
  let lock: RunLock | undefined;
  try {
    if (opts.resume !== undefined) lock = claimRunFolder(resolve(opts.resume), { flag: '--resume', shown: opts.resume, command: 'run' });
    const resumed = opts.resume !== undefined ? loadResumeState(opts.resume) : undefined;
    if (resumed) opts = resumed.options(opts);
    if (opts.columns) parseColumns(opts.columns.join(','));
    preflightRun(opts, 'inferbench-results');
    if (extras.dryRun) {
      run = await resolveRun(opts, say, extras.plan, signals.startup);
      io.stdout.write(`${JSON.stringify(run.plan, null, 2)}\n`);
      return { exitCode: 0 };
    }
    // Before anything is sent: a later --resume of this folder must know this part's ids were used.
    resumed?.begin();
    const createdAt = resumed ? new Date(resumed.createdAt) : new Date();
    let outDir = resolve(opts.out ?? defaultRunDir('inferbench-results', opts.label, createdAt));
    if (!lock && opts.out !== undefined) lock = claimRunFolder(outDir, { flag: '--out', shown: opts.out, command: 'run' });
    else if (!lock) ({ dir: outDir, lock } = claimDefaultRunFolder(outDir, 'run'));
    run = await resolveRun(opts, say, extras.plan, signals.startup);
    const { plan, baseUrl } = run;
    /** Shards: the key every shard of this run shares (manifest, summary, barrier). */
    const runKey = plan.distribution.shard ? runKeyOf(opts) : undefined;
    // Before anything is written: an explicit --power that gives no reading stops here, and the manifest records the source.
    const powerStart = await startPowerSampler(opts, baseUrl, say, plan.target.replicas);
    power = powerStart.reader;
    // Ctrl-C while starting, before the folder is written: nothing is (the lock takes away a folder it made).
    if (signals.received) throw new StartupStopped();
    // A failed write (disk full, I/O error) stops the run like Ctrl-C; the end says what and where, exit 1.
    writer = new RunWriter(outDir, opts.records, { onFailure: () => abort.abort() });
    const w = writer;
    if (!resumed) {
      writeRunManifest(w, { opts, run, createdAt, runKey, power: powerStart.record });
      writeSampleRequests(w, opts, run.prompts);
    }
    senders = await openSenders(plan, baseUrl, opts.apiKey);
    const workers = plan.distribution.workers ?? 1;
    if (senders.pool) say(`workers: ${workers} load threads, each with its own connections; their clocks agree with this one within ${senders.pool.clockResidualUs.toFixed(1)} µs`);
    const planned = plan.load.plannedRows;
    const progress = new Progress(io.stderr, opts.progress, planned);
    const base: RunDocBase = { opts, run, outDir, createdAt, workers, power: powerStart.record };
    const context = runSummaryDoc(base, [], false).context;
    // A dashboard serving the results folder (or --ui) shows the run live: an observer of the progress counters.
    const meta = { model: context.model, engine: context.engine, profile: opts.profile, plannedStages: planned };
    live = await openLiveFeed({ outDir, ui: extras.ui === true, counters: progress.counters, meta }, say, io.stderr);
    const telemetry = new TelemetrySampler(baseUrl, opts.apiKey);
    // Several replicas: each one's /metrics, onto its own replicas[] entry (the row's server figures would be one replica's).
    const replicaWatch = senders.replicas && plan.target.replicas ? watchReplicas(plan.target.replicas, senders.replicas, opts.apiKey) : undefined;
    if (replicaWatch) {
      const has = await replicaWatch.start();
      const sampled = plan.target.replicas?.filter((_, i) => has[i]) ?? [];
      say(`replicas: ${plan.target.replicas?.length} endpoints, ${plan.target.balance ?? 'round-robin'} balancing${sampled.length > 0 ? `; sampling /metrics of ${sampled.join(', ')}` : ''}`);
    } else if (await telemetry.start()) say(`server telemetry: sampling ${baseUrl}/metrics twice a second (running/waiting requests, KV-cache usage)`);
    const health = new HealthMonitor();
    const shard = await startShard(plan, runKey, say, run.notes, abort.signal);
    if (shard) base.shard = shard;
    const done: StageSummary[] = [...(resumed?.stages ?? [])];
    /** Stopped before the first row, after the folder was written: no table, and the folder says no row ran. */
    const stoppedWhileStarting = async (): Promise<RunOutcome> => {
      progress.stop();
      telemetry.stop();
      replicaWatch?.stop();
      // summary.json with no rows, interrupted (`--resume DIR` runs them all); a resumed folder keeps its summary.
      if (!resumed) writeRunSummary(w, { summary: runSummaryDoc(base, [], true), complete: false });
      await w.close();
      await live?.feed.close('interrupted', SIGNAL_EXIT_CODE);
      return { exitCode: SIGNAL_EXIT_CODE };
    };
    if (signals.received) return await stoppedWhileStarting();
    say(resumed ? `resuming ${opts.profile} profile at row ${done.length + 1}; results in ${outDir}` : `running ${opts.profile} profile; results in ${outDir}`);
    const runner = httpPlanRunner(plan, {
      baseUrl,
      sender: senders.sender,
      probeTarget: senders.target,
      tokenizer: run.tokenizer,
      workload: run.prompts.workload,
      signal: abort.signal,
      // Several replicas: the idle wait between rows reads every replica's /metrics (the one-URL sampler is not started).
      ...(replicaWatch?.hasGauges
        ? { readGauges: () => replicaWatch.readGauges(), gaugesOf: 'replicas' as const }
        : telemetry.hasGauges
          ? { readGauges: () => telemetry.readNow() }
          : {}),
      say,
    });
    const observers = [
      // From the first row on, a signal stops the rows and keeps what they measured (run-signals.ts).
      { onStageStart: () => signals.startMeasuring() },
      replicaWatch ? replicaWatch.observer : telemetryObserver(telemetry, run.prompts.workload),
      powerObserver(power),
      progressObserver(progress),
      runWriterObserver(w, done, (stages) => runSummaryDoc(base, stages, false)),
      liveObserver(live, planned),
    ];
    const resume = resumed ? { resume: { stages: resumed.stages, nextRequestId: resumed.nextRequestId, idBase: resumed.idBase, requestsSent: resumed.requestsSent } } : {};
    const result = await executeRunPlan(plan, runner, observers, { prompts: run.prompts, signal: abort.signal, ...resume });
    // A signal after the start-up's last step but before the first row's first request.
    if (signals.received && !signals.measuring) return await stoppedWhileStarting();
    progress.stop();
    telemetry.stop();
    power?.stop();
    writePowerSeries(w, power);
    replicaWatch?.stop();
    const series: readonly object[] = replicaWatch ? replicaWatch.series() : telemetry.series();
    if (series.length > 0) w.writeText('telemetry.jsonl', series.map((x) => JSON.stringify(x)).join('\n') + '\n');
    await w.close();
    const clientHealth = health.finish(result.stages, senders.pool ? await senders.pool.stats() : undefined);
    const { doc, exitCode } = await finishRun(base, result, clientHealth, w, io);
    await live?.feed.close(w.failure ? 'failed' : result.interrupted ? 'interrupted' : exitCode === 0 ? 'finished' : 'failed', exitCode);
    return { doc, exitCode, dir: outDir, ...(live?.spawned ? { dashboard: live.spawned } : {}) };
  } catch (err) {
    // Ctrl-C while starting (the simulator, the probes, the /tokenize calibration): the signal's line said it all.
    if (err instanceof StartupStopped) return { exitCode: SIGNAL_EXIT_CODE };
    throw err;
  } finally {
    signals.release();
    power?.stop();
    try {
      await live?.feed.close('failed');
      await senders?.close();
      await run?.sim?.close();
    } finally {
      lock?.release();
    }
  }
}
