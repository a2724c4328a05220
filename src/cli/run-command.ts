import { join, resolve } from 'node:path';
import { imageApiFor } from '../config/image-options.js';
import { DEFAULT_STALL_SECONDS, type RunOptions } from '../config/run-options.js';
import { InferbenchError, configError } from '../core/errors.js';
import { shortError } from '../core/short-error.js';
import { type DetectedEngine, detectEngine, listModels } from '../dialects/detect.js';
import { getDialect } from '../dialects/index.js';
import type { Dialect } from '../dialects/types.js';
import { runBenchmark } from '../load/benchmark.js';
import { createHttpStageRunner } from '../load/http-runner.js';
import { OPEN_LOOP_MAX_IN_FLIGHT, plannedStageCount } from '../load/profiles.js';
import { HealthMonitor, healthLine } from '../metrics/health.js';
import { attachServerTelemetry, type StageSummary } from '../metrics/summary.js';
import { renderCsvReport, renderMarkdownReport, renderTerminalReport, type RunSummaryDoc } from '../report/run-summary.js';
import { parseColumns } from '../report/columns.js';
import { terminalStyle } from '../report/terminal.js';
import { writeRunReportFiles } from './run-report-files.js';
import { workloadSpecOf } from './workload-spec.js';
import { writeSampleRequests } from './sample-requests.js';
import { RunWriter, defaultRunDir } from '../store/run-writer.js';
import { claimDefaultRunFolder, claimRunFolder, type RunLock } from '../store/run-lock.js';
import { isFsError } from '../store/write-errors.js';
import { diskFailureLine } from './disk-failure.js';
import { HttpTarget } from '../transport/http.js';
import { TelemetrySampler } from '../transport/telemetry.js';
import { buildProfileConfig, gridDescription, lengthContext } from '../runplan/profile-config.js';
import { Progress } from './progress.js';
import type { EmbeddedSim } from './embedded-sim.js';
import { loadResumeState } from './resume.js';
import { toolVersion } from './version.js';
import { setupWorkload } from '../runplan/workload-setup.js';
import { describeWindowRules, shortWindowRules } from './window-rules.js';
import { waitForIdleServer } from '../transport/idle-wait.js';
import type { Workload } from '../workload/types.js';
import { preflightRun } from './preflight.js';
import { checkServedModel } from '../runplan/served-models.js';
import { capacityFailed, capacityField } from './capacity-answer.js';
import { datasetRepeats, noSuccessMessage, notAnInferenceServer } from './run-outcome.js';
import { openLiveFeed, type LiveLink } from '../ui/live-setup.js';
import { redactArgv } from '../ui/redact.js';
import type { SpawnedDashboard } from '../ui/spawn-dashboard.js';
import { chooseWorkers } from '../distributed/auto-workers.js';
import { WorkerPool } from '../distributed/worker-pool.js';
import { meetAtRow } from '../distributed/barrier.js';
import type { ShardSpec } from '../load/shard.js';
import { epochOrigin, runKeyOf, waitUntilWallClock, type ShardInfo } from '../distributed/shard-run.js';

export interface RunOutcome {
  doc: RunSummaryDoc;
  exitCode: number;
  /** `--ui` started a dashboard for this run: the caller keeps it up (hold) until Ctrl-C. */
  dashboard?: SpawnedDashboard;
}

/** Observers a run can have besides its files: `--ui` (a live dashboard; see src/ui/live-setup.ts). */
export interface RunExtras {
  ui?: boolean;
}

/** `inferbench run`: resolve the target, run the profile, write the run folder, print the table. */
export async function runCommand(opts: RunOptions, io: { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream }, extras: RunExtras = {}): Promise<RunOutcome> {
  const human = opts.json ? io.stderr : io.stdout;
  const say = (line: string): void => void human.write(`${line}\n`);
  const abort = new AbortController();
  let writer: RunWriter | undefined;
  let sigints = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    sigints++;
    if (sigints > 1) {
      writer?.flushSync();
      process.exit(130);
    }
    io.stderr.write(`\n${signal}: stopping — cancelling requests in flight, keeping every finished one (again to quit at once)\n`);
    abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let sim: EmbeddedSim | undefined;
  let target: HttpTarget | undefined;
  let pool: WorkerPool | undefined;
  let live: LiveLink | undefined;
  // One run per folder (store/run-lock.ts): held from before --resume trims requests.jsonl until the run ends.
  let lock: RunLock | undefined;
  try {
    if (opts.resume !== undefined) lock = claimRunFolder(resolve(opts.resume), { flag: '--resume', shown: opts.resume, command: 'run' });
    const resumed = opts.resume !== undefined ? loadResumeState(opts.resume) : undefined;
    if (resumed) opts = resumed.options(opts);
    if (opts.columns) parseColumns(opts.columns.join(','));
    preflightRun(opts, 'inferbench-results');
    const createdAt = resumed ? new Date(resumed.createdAt) : new Date();
    let outDir = resolve(opts.out ?? defaultRunDir('inferbench-results', opts.label, createdAt));
    if (!lock && opts.out !== undefined) lock = claimRunFolder(outDir, { flag: '--out', shown: opts.out, command: 'run' });
    else if (!lock) ({ dir: outDir, lock } = claimDefaultRunFolder(outDir, 'run'));
    let baseUrl = opts.target;
    if (!baseUrl) {
      const { startDefaultSim } = await import('./embedded-sim.js');
      sim = await startDefaultSim(opts);
      baseUrl = sim.url;
      say(`target: built-in simulator — ${sim.description} at ${sim.url} (pass --target URL to measure a real server)`);
      for (const w of sim.warnings) say(w);
    }

    const { dialect, model, engine, detection, engineVersion } = await resolveApi(opts, baseUrl, sim);
    if (detection !== undefined) say(`detected: ${detection}`);
    const notes: string[] = [];
    if (opts.forceLength && !dialect.canForceLength) {
      const note = `${dialect.name} cannot force the output length: the table reports the lengths the server chose`;
      notes.push(note);
      say(`note: ${note}`);
    }

    const setup = await setupWorkload(opts, { baseUrl, engine, model, api: dialect.name });
    const { tokenizer } = setup;
    if (setup.warning) say(`note: ${setup.warning}`);
    if (setup.notice) say(setup.notice);
    // A grid's cells have their own lengths: the single-row defaults would mislead.
    say(`prompts: ${opts.profile === 'grid' ? gridDescription(opts) : setup.workload.description}`);
    const profileCfg = buildProfileConfig(opts, setup.workloadFor, setup.workload);

    /** Shards: the key every shard of this run shares (manifest, summary, barrier). */
    const runKey = opts.shard ? runKeyOf(opts) : undefined;
    // A failed write (disk full, I/O error) stops the run like Ctrl-C; the end says what and where, exit 1.
    writer = new RunWriter(outDir, opts.records, { onFailure: () => abort.abort() });
    const context = {
      model,
      engine: sim ? `${engine} (simulated)` : engine,
      // --engine-version wins; otherwise the version the server reported to detection is recorded.
      ...((opts.engineVersion ?? engineVersion) ? { engineVersion: (opts.engineVersion ?? engineVersion) as string } : {}),
      ...((opts.gpu ?? sim?.gpu) ? { gpu: (opts.gpu ?? sim?.gpu) as string } : {}),
      ...((opts.gpus ?? sim?.gpus) ? { gpus: (opts.gpus ?? sim?.gpus) as number } : {}),
      ...((opts.quant ?? sim?.quant) ? { quant: (opts.quant ?? sim?.quant) as string } : {}),
      ...(sim?.kvCacheDtype ? { kvCacheDtype: sim.kvCacheDtype } : {}),
      ...(opts.label ? { label: opts.label } : {}),
      ...lengthContext(opts, setup.workload.description),
    };
    if (!resumed) writer.writeJson('manifest.json', {
      tool: { name: 'inferbench', version: toolVersion() },
      createdAt: createdAt.toISOString(),
      node: process.version,
      command: 'run',
      argv: redactArgv(process.argv.slice(2)),
      options: { ...opts, apiKey: opts.apiKey ? '<redacted>' : undefined },
      target: { url: opts.target ?? null, simulated: sim !== undefined, sim: sim?.description, api: dialect.name, engine, model, detection },
      seed: opts.seed,
      ...(opts.shard ? { shard: { index: opts.shard.index, count: opts.shard.count, runKey } } : {}),
    });
    if (!resumed) writeSampleRequests(writer, opts, setup);

    const maxInFlight = Math.max(
      opts.maxConcurrency ?? 0,
      ...(opts.concurrencies ?? [1]),
      opts.profile === 'grid' ? opts.numPrompts : 0,
      opts.maxConcurrency === undefined && opts.profile !== 'synchronous' && opts.profile !== 'concurrent' ? DEFAULT_POOL_CONNECTIONS : 0,
    );
    target = new HttpTarget({ baseUrl, connections: maxInFlight, timeouts: opts.timeouts, ...(opts.apiKey ? { apiKey: opts.apiKey } : {}) });
    const choice = opts.workers === 'auto' ? chooseWorkers(opts, setup.workload) : undefined;
    if (choice) say(choice.reason);
    const workers = choice?.workers ?? (opts.workers === 'auto' ? 1 : (opts.workers ?? 1));
    if (workers > 1) {
      // Without --max-concurrency an open loop's only in-flight bound is the connection pool: the workers share it.
      const unbounded = opts.maxConcurrency === undefined && maxInFlight === DEFAULT_POOL_CONNECTIONS;
      const connections = unbounded ? Math.ceil(maxInFlight / workers) : maxInFlight;
      pool = await WorkerPool.start({ workers, baseUrl, connections, timeouts: opts.timeouts, ...(opts.apiKey ? { apiKey: opts.apiKey } : {}) });
      say(`workers: ${workers} load threads, each with its own connections; their clocks agree with this one within ${pool.clockResidualUs.toFixed(1)} µs`);
    }
    const progress = new Progress(io.stderr, opts.progress, plannedStageCount(profileCfg));
    // A dashboard serving the results folder (or --ui) shows the run live: an observer of the progress counters.
    live = await openLiveFeed(
      { outDir, ui: extras.ui === true, counters: progress.counters, meta: { model, engine: context.engine, profile: opts.profile, plannedStages: plannedStageCount(profileCfg) } },
      say,
      io.stderr,
    );
    const telemetry = new TelemetrySampler(baseUrl, opts.apiKey);
    if (await telemetry.start()) say(`server telemetry: sampling ${baseUrl}/metrics twice a second (running/waiting requests, KV-cache usage)`);
    const health = new HealthMonitor();
    const w = writer;
    const cutByRow = new Map<number, number>();
    const runner = createHttpStageRunner({
      target: pool ?? target,
      ...(opts.shard ? { shard: opts.shard } : {}),
      ...(opts.reasoningFormat ? { reasoningFormat: opts.reasoningFormat } : {}),
      dialect,
      model,
      forceLength: opts.forceLength && dialect.canForceLength,
      stream: opts.stream,
      tokenizer,
      seed: opts.seed,
      signal: abort.signal,
      drainMs: opts.drainSeconds * 1000,
      ...(opts.slo ? { slo: opts.slo } : {}),
      ...(opts.extraBody ? { extraBody: opts.extraBody } : {}),
      onDispatch: () => void progress.counters.dispatched++,
      onRecord: (r) => {
        // Requests cut in each row, ramp-up and cool-down included: the next row waits for a server that may serve them.
        if (r.status === 'incomplete') cutByRow.set(r.stage, (cutByRow.get(r.stage) ?? 0) + 1);
        progress.counters.done++;
        if (r.status !== 'ok') progress.counters.errors++;
        w.appendRecord(r);
      },
    });
    const docFor = (stages: StageSummary[], interrupted: boolean): RunSummaryDoc => ({
      tool: { name: 'inferbench', version: toolVersion() },
      runId: outDir.split(/[\\/]/).pop() ?? outDir,
      createdAt: createdAt.toISOString(),
      finishedAt: new Date().toISOString(),
      layout: opts.profile === 'grid' ? 'grid' : 'sweep',
      context,
      target: { ...(opts.target ? { url: opts.target } : {}), api: dialect.name, engine, model, simulated: sim !== undefined, ...(detection !== undefined ? { detection } : {}) },
      profile: opts.profile,
      workload: opts.profile === 'grid' ? gridDescription(opts) : profileCfg.workload.description,
      workloadSpec: workloadSpecOf(opts, { tokenizer: tokenizer.name, chat: dialect.name === 'openai-chat', forcedOutputLength: opts.forceLength && dialect.canForceLength }),
      windowRules: describeWindowRules(opts),
      ...(shardInfo ? { shard: shardInfo } : {}),
      ...(workers > 1 ? { workers } : {}),
      stages,
      ...capacityField(opts, stages, interrupted),
      interrupted,
      notes,
      outDir,
    });
    let shardInfo: ShardInfo | undefined;
    if (opts.startAt !== undefined) {
      const late = Date.now() - opts.startAt;
      say(late > 0 ? `start-at ${new Date(opts.startAt).toISOString()} passed ${(late / 1000).toFixed(1)} s ago: starting now` : `waiting for --start-at ${new Date(opts.startAt).toISOString()} (${(-late / 1000).toFixed(1)} s)`);
      await waitUntilWallClock(opts.startAt, abort.signal);
    }
    if (opts.shard) {
      const origin = epochOrigin();
      const startedAt = origin + performance.now();
      shardInfo = {
        index: opts.shard.index,
        count: opts.shard.count,
        runKey: runKey as string,
        seed: opts.seed,
        ...(opts.startAt !== undefined ? { startAt: new Date(opts.startAt).toISOString(), startOffsetMs: startedAt - opts.startAt } : {}),
        startedAt: new Date(startedAt).toISOString(),
        ...(opts.barrier ? { barrier: resolve(opts.barrier) } : {}),
        epochOriginMs: origin,
      };
      if (!opts.barrier && plannedStageCount(profileCfg) > 1) {
        say(`note: rows after the first start when this shard finishes the row before, not with the other shards: pass --barrier DIR (a folder every shard can write) so every row starts together`);
      }
      notes.push(`shard ${opts.shard.index}/${opts.shard.count}: each row holds this shard's part of the load (every ${opts.shard.count}th arrival of an open loop, its share of the streams); inferbench merge joins the shards into the whole run`);
      say(`shard ${opts.shard.index}/${opts.shard.count}: this process sends its part of the run${shardInfo.startOffsetMs !== undefined ? ` (started ${shardInfo.startOffsetMs.toFixed(1)} ms after --start-at)` : ''}; inferbench merge joins the shards' folders`);
    }
    const done: StageSummary[] = [...(resumed?.stages ?? [])];
    say(resumed ? `resuming ${opts.profile} profile at row ${done.length + 1}; results in ${outDir}` : `running ${opts.profile} profile; results in ${outDir}`);
    const result = await runBenchmark(profileCfg, runner, {
      signal: abort.signal,
      completed: resumed?.stages ?? [],
      firstRequestId: resumed?.nextRequestId ?? 0,
      ...(opts.slo ? { slo: opts.slo } : {}),
      ...(opts.repeat ? { repeat: opts.repeat } : {}),
      ...(opts.steadyState ? { steadyState: true } : {}),
      // A resumed run from before --stall-timeout existed has none in its manifest.
      stallMs: (opts.stallSeconds ?? DEFAULT_STALL_SECONDS) * 1000,
      beforeStage: (_spec, _i, prior) => {
        const prev = prior[prior.length - 1];
        // The probe's idle level: the synchronous row's TTFT (embeddings: its latency, which the probe then times).
        const idle = prior.filter((x) => x.label === 'synchronous').map((x) => (dialect.embeddings ? x.metrics.e2eMs : x.metrics.ttftMs)).find((m) => m !== undefined);
        return waitForIdleServer({
          ...(telemetry.hasGauges ? { readGauges: () => telemetry.readNow() } : {}),
          probe: () => probeTtft(target as HttpTarget, dialect, model, setup.workload),
          ...(idle ? { idleTtftMs: idle.median, ...(dialect.embeddings ? { probeLabel: 'latency' } : {}) } : {}),
          // Cut requests (an over-saturated stop, the cool-down's cancellations) count: a server may keep running abandoned requests.
          leftRequests: prev !== undefined && ((cutByRow.get(prev.index) ?? 0) > 0 || prev.requests.incomplete > 0 || (prev.requests.cooldownCut ?? 0) > 0 || prev.stoppedEarly !== undefined),
          ...(prev ? { cutRequests: Math.max(cutByRow.get(prev.index) ?? 0, prev.requests.incomplete + (prev.requests.cooldownCut ?? 0)), previousLabel: prev.label } : {}),
          boundMs: opts.idleWaitSeconds * 1000,
          signal: abort.signal,
        });
      },
      ...(opts.shard && opts.barrier
        ? {
            alignStage: async (i: number) => {
              const met = await meetAtRow(i, { dir: resolve(opts.barrier as string), shard: opts.shard as ShardSpec, meeting: `${runKey as string}-${opts.startAt ?? 'now'}` }, abort.signal);
              if (met.waitedMs > 2000) say(`barrier: every shard reached row ${i + 1} after ${(met.waitedMs / 1000).toFixed(1)} s`);
            },
          }
        : {}),
      ...(telemetry.hasGauges ? { markStage: (i: number) => telemetry.markEdge(i) } : {}),
      onStageStart: (spec, i) => {
        telemetry.setStage(i);
        progress.stageStarted(spec, i);
        live?.feed.stageStarted(i, spec.label, plannedStageCount(profileCfg));
      },
      onStageEnd: (s, r) => {
        attachServerTelemetry(s, telemetry.summarize(s.index), setup.workload);
        progress.stageEnded(s);
        // Written after every row, so a crash loses at most the row in progress (and --resume restarts it).
        if (!r.interrupted) {
          done.push(s);
          w.writeJson('summary.json', { ...docFor(done, false), complete: false });
          live?.feed.stageEnded();
        }
      },
      stopReason: (s) => hopelessReason(s, dialect.name, baseUrl),
    });
    progress.stop();
    telemetry.stop();
    if (telemetry.series().length > 0) {
      writer.writeText('telemetry.jsonl', telemetry.series().map((x) => JSON.stringify(x)).join('\n') + '\n');
    }
    await writer.close();

    const health0 = health.finish(result.stages, pool ? await pool.stats() : undefined);
    const doc: RunSummaryDoc = { ...docFor(result.stages, result.interrupted), health: health0 };
    writer.writeJson('summary.json', { ...doc, complete: !result.interrupted });
    if (opts.formats.includes('md')) writer.writeText('table.md', renderMarkdownReport(doc));
    if (opts.formats.includes('csv')) writer.writeText('table.csv', renderCsvReport(doc));
    // The terminal gets the compact table (--columns), table.md the full seed layout.
    if (opts.formats.includes('table')) say(`\n${renderTerminalReport(doc, { ...(opts.columns ? { columns: opts.columns } : {}), style: terminalStyle(human) })}`);
    say(shortWindowRules(opts));
    const repeats = datasetRepeats(opts.workload.data, setup.workload.size ?? 0, result.stages);
    if (repeats) say(`note: ${repeats}`);
    if (doc.health) say(healthLine(doc.health));
    const reportFiles = w.failure ? [] : await writeRunReportFiles(outDir, opts.formats).catch((err: unknown) => (isFsError(err) ? (w.recordFailure(err.path ?? outDir, err), []) : Promise.reject(err)));
    if (!w.failure) say(`saved: ${join(outDir, 'summary.json')}, requests.jsonl${opts.formats.includes('md') ? ', table.md' : ''}${opts.formats.includes('csv') ? ', table.csv' : ''}${reportFiles.map((f) => `, ${f}`).join('')}`);
    if (result.interrupted && !w.failure) say(`interrupted: \`inferbench run --resume ${outDir}\` runs the row that was cut and the rows after it`);
    if (opts.json) io.stdout.write(`${JSON.stringify({ schemaVersion: 1, ...doc, complete: !result.interrupted }, null, 2)}\n`);

    const anyOk = result.stages.some((s) => s.requests.ok > 0);
    const exitCode = w.failure ? 1 : result.interrupted ? 130 : anyOk && !result.stoppedBecause && !capacityFailed(doc) ? 0 : 1;
    if (w.failure) io.stderr.write(`error: ${diskFailureLine(w.failure, { stopped: result.interrupted, outDir })}\n`);
    else if (result.stoppedBecause) io.stderr.write(`error: ${result.stoppedBecause}\n`);
    else if (!anyOk && !result.interrupted) io.stderr.write(`error: ${noSuccessMessage(result.stages)}\n`);
    await live?.feed.close(w.failure ? 'failed' : result.interrupted ? 'interrupted' : exitCode === 0 ? 'finished' : 'failed', exitCode);
    return { doc, exitCode, ...(live?.spawned ? { dashboard: live.spawned } : {}) };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    // After a first Ctrl-C the process is still closing sockets and files: another one must end it at once.
    if (sigints > 0) {
      const quit = (): void => {
        writer?.flushSync();
        process.exit(130);
      };
      process.once('SIGINT', quit);
      process.once('SIGTERM', quit);
    }
    try {
      await live?.feed.close('failed');
      await pool?.close();
      await target?.close();
      await sim?.close();
    } finally {
      lock?.release();
    }
  }
}

const MODEL_OPTIONAL = new Set(['vllm', 'tgi']);
/** Connections when nothing else bounds the requests in flight (open loops without --max-concurrency stop at this many in flight). */
const DEFAULT_POOL_CONNECTIONS = OPEN_LOOP_MAX_IN_FLIGHT;

async function resolveApi(
  opts: RunOptions,
  baseUrl: string,
  sim: EmbeddedSim | undefined,
): Promise<{ dialect: Dialect; model: string; engine: string; detection?: string; engineVersion?: string }> {
  const auth = opts.apiKey ? { apiKey: opts.apiKey } : {};
  if (opts.api === 'auto') {
    const found = await detectEngine(baseUrl, auth);
    // vLLM's legacy server and TGI serve one model and take no model name in the request.
    const model = opts.model ?? sim?.model ?? found.model ?? found.models[0] ?? (MODEL_OPTIONAL.has(found.api) ? 'served model' : undefined);
    if (!model) throw configError(`the server at ${baseUrl} lists no model`, 'pass --model NAME');
    if (opts.model && !sim) await checkServedModel(opts.model, { baseUrl, engine: found.engine, apiKey: opts.apiKey, models: found.models });
    // Images need a chat route: a server detected on its completions or native route is spoken to on its OpenAI chat route.
    const api = opts.workload.images ? imageApiFor(found.api) : found.api;
    const swapped = api !== found.api ? ` (its chat route: --images)` : '';
    return {
      dialect: getDialect(api),
      model,
      engine: found.engine,
      detection: `${engineWithVersion(found)}, model ${model}, speaking ${api}${swapped} (${found.evidence}); override with --api`,
      ...(found.version ? { engineVersion: found.version } : {}),
    };
  }
  const dialect = getDialect(opts.api);
  let model = opts.model ?? sim?.model;
  if (opts.model && !sim) await checkServedModel(opts.model, { baseUrl, engine: opts.api, apiKey: opts.apiKey });
  if (!model) {
    const models = await listModels(baseUrl, opts.apiKey).catch((err: unknown) => {
      if (err instanceof InferbenchError && err.code === 'E_CONNECT') throw err;
      return [] as string[];
    });
    model = models[0];
  }
  if (!model) throw configError(`could not read a model name from ${baseUrl}/v1/models`, 'pass --model NAME');
  // The API is the user's; the engine behind it is still worth knowing (its /tokenize gives exact prompt lengths,
  // and the run records it). GET probes only; a server detection cannot place stays named by its API.
  const found = await detectEngine(baseUrl, auth).catch(() => undefined);
  if (!found) return { dialect, model, engine: opts.api };
  return { dialect, model, engine: found.engine, detection: `${engineWithVersion(found)}, speaking ${opts.api} as asked (${found.evidence})`, ...(found.version ? { engineVersion: found.version } : {}) };
}

const engineWithVersion = (found: DetectedEngine): string => `${found.engine}${found.version ? ` ${found.version}` : ''}`;

/**
 * A row where nothing succeeded and every failure says the request itself is wrong (auth, path, format)
 * will not get better at the next rate: stop there with what to do.
 */
function hopelessReason(s: StageSummary, api: string, url: string): string | undefined {
  // A server that accepts requests and answers none: every row after would wait the same way.
  if (s.serverSilent) {
    return `${s.label}: ${s.stoppedEarly ?? 'no reply from the server'}; not one request completed, so the run stops here (requests that take longer need a longer --stall-timeout)`;
  }
  // A row that stopped on a streak of fast failures with nothing to show: the next row would only repeat it.
  if (s.stoppedEarly && s.requests.ok === 0 && s.overSaturated === undefined) return `${s.label}: ${s.stoppedEarly}; the server is refusing every request${notAnInferenceServer(s)}`;
  if (s.requests.ok > 0 || s.requests.errors === 0 || !s.firstError) return undefined;
  const codes = Object.keys(s.errorsByCode);
  if (codes.length !== 1) return undefined;
  const m = /^E_HTTP_STATUS: HTTP (\d+)/.exec(s.firstError);
  const status = m ? Number(m[1]) : undefined;
  const first = shortError(s.firstError.replace(/^E_[A-Z_]+: /, ''));
  if (status === 401 || status === 403) return `every request was refused (${first}); pass the key with --api-key or OPENAI_API_KEY`;
  if (status === 404 || status === 405) return `the server has no ${api} endpoint at ${url} (${first}); check --target's path or pick another --api`;
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) {
    return `every request was rejected (${first}); check --model, --api and --extra-body`;
  }
  if (codes[0] === 'E_STREAM_PARSE') return `the replies are not ${api} responses (${first}); check --target or pick another --api`;
  if (codes[0] === 'E_CONNECT') return `cannot connect to ${url} (${first}); start the server or fix --target`;
  return undefined;
}

/**
 * A one-token request with a fresh prompt: its time to first token tells whether the server is back to idle.
 * Items far past any row's ids keep it unique at its start.
 */
let probes = 0;
async function probeTtft(target: HttpTarget, dialect: Dialect, model: string, workload: Workload): Promise<number | undefined> {
  const item = workload.item(1_000_000_000 + probes++);
  // Embeddings have no first token: the probe's whole latency, against the synchronous row's (see beforeStage).
  const embeddings = dialect.embeddings === true;
  const request = {
    model, prompt: item.prompt, ...(item.messages ? { messages: item.messages } : {}), ...(item.inputs ? { inputs: item.inputs } : {}),
    maxTokens: 1, forceLength: false, stream: !embeddings,
  };
  const ex = await target.send(dialect.buildRequest(request), dialect, request);
  if (ex.error) return undefined;
  if (embeddings) return ex.endAtMs - ex.sentAtMs;
  if (ex.contentTimesMs.length === 0) return undefined;
  return (ex.contentTimesMs[0] as number) - ex.sentAtMs;
}
