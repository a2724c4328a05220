import { configError } from '../core/errors.js';
import { VirtualClock } from '../core/virtual-clock.js';
import { driveStage, REPEAT_SEED_STRIDE, type StartRequest } from '../load/driver.js';
import type { ShardSpec } from '../load/shard.js';
import type { StageResult, StageRunner, StageSpec } from '../load/types.js';
import { buildRecord } from '../metrics/derive.js';
import type { RequestRecord } from '../metrics/record.js';
import type { Exchange } from '../transport/exchange.js';
import type { WorkItem } from '../workload/types.js';
import { type ResolvedSimEngine, type SimEngineDescription, type SimEngineOptions, resolveSimEngine } from './create.js';
import { Engine, SimRejectedError } from './engine/engine.js';
import type { SimEngineStats } from './types.js';
import type { EnergyLedger } from './engine/power.js';
import { rowEnergy, rowWindow } from '../power/energy.js';
import type { Energy } from '../results/energy.js';
import type { StageSummary } from '../metrics/summary.js';
import { blockHashes, chatTokenIds, completionTokenIds } from './wire/prompt-hash.js';
import { promptText, SimRouter, type RouterPolicy } from './cluster/router.js';
import { kvTransferLink, PdEngine, type KvTransferLink, type PdSplit } from './cluster/pd.js';
import type { SimEngine } from './types.js';
import { prefixBlockHashes } from './virtual-prefix.js';

/**
 * Prompt block hashes of an item, as the HTTP sim would compute them (prefix caching): from its text, or, for a
 * lengths-only item of a prefix group, from its group and shared length (virtual-prefix.ts).
 */
function itemBlockHashes(item: WorkItem, itemIndex: number): number[] | undefined {
  const ids = item.messages && item.messages.length > 0 ? chatTokenIds(item.messages) : item.prompt ? completionTokenIds(item.prompt) : undefined;
  return ids ? blockHashes(ids) : prefixBlockHashes(item, itemIndex);
}

/** The router's pick: by the prompt's text where there is one (as the HTTP router), else by its block hashes. */
function routeOf(router: SimRouter, item: WorkItem, hashes: readonly number[] | undefined): number {
  if (item.prompt || item.messages) return router.pick(promptText(item.messages ? { messages: item.messages } : { prompt: item.prompt }));
  return router.pickChain(hashes);
}

export interface VirtualRunnerOptions {
  /** The run's seed: arrivals as `run` draws them (seed + row), and the engine's noise. */
  seed?: number;
  /** `--drain`: how long requests may run on after a row's time limit before they are cancelled (default: no limit). */
  drainMs?: number;
  /** `--shard I/N`: predict this shard's part of each row. */
  shard?: ShardSpec;
  /** `predict --replicas N --router P`: N engines behind the simulated router, as `sim --replicas` serves them. */
  cluster?: { replicas: number; router: RouterPolicy };
  /**
   * `predict --pd P:D`: P prefill and D decode engines, the KV moved between them over the GPU's link (cluster/pd.ts),
   * as `sim --pd` serves them; records carry `replica` = the decode engine. `link` replaces the link's latency (µs) or
   * bandwidth (GB/s per GPU), a what-if (e.g. a cross-node network). Not with `cluster`.
   */
  pd?: PdSplit & { link?: { alphaUs?: number; betaGBs?: number } };
  /** Keep the engine's energy ledger for energyOf() (default true; a capacity search needs none and runs faster). */
  energy?: boolean;
}

export interface VirtualStageRunner extends StageRunner {
  readonly description: SimEngineDescription;
  /** `pd`: the KV transfer link the deployment uses (its constants and bytes per token). */
  readonly pdLink?: KvTransferLink;
  /** Engine counters of the last stage run. */
  lastStats(): SimEngineStats | undefined;
  /**
   * The simulated GPUs' energy over a row's window, from the engine's own ledger (engine/power.ts); undefined for a
   * GPU without power figures, a row without a window, or one run too long ago (the last 16 rows are kept).
   */
  energyOf(s: StageSummary): Energy | undefined;
}

/** Rows whose energy ledgers a runner keeps (a capacity search runs many). */
const LEDGERS_KEPT = 16;

/** A predicted row's energy from the engine's ledger: exact over the window, so always valid. */
export function ledgerEnergy(ledger: EnergyLedger, s: StageSummary): Energy | undefined {
  const w = rowWindow(s);
  if (!w) return undefined;
  const gpus = Array.from({ length: ledger.gpus }, (_, i) => i);
  return rowEnergy(s, { joules: ledger.between(w.fromMs, w.toMs), coverage: 1, maxGapMs: 0, gpus, source: 'simulator' }, (w.toMs - w.fromMs) / 1000);
}

/**
 * Runs stages against the simulated engine in virtual time: the load driver of `run` (load/stage-driver.ts) on a
 * virtual clock, the engine as what answers its requests. Stages follow each other on one virtual timeline.
 */
export function createVirtualStageRunner(engineOptions: SimEngineOptions, opts: VirtualRunnerOptions = {}): VirtualStageRunner {
  const resolved = resolveSimEngine(engineOptions);
  const seed = opts.seed ?? engineOptions.seed ?? 1;
  let clockMs = 0;
  let stats: SimEngineStats | undefined;
  const ledgers = new Map<number, EnergyLedger>();
  if (opts.pd && opts.cluster) throw configError('a P/D deployment routes requests itself: give pd or cluster, not both');
  const pd = opts.pd ? { split: { prefill: opts.pd.prefill, decode: opts.pd.decode }, link: kvTransferLink(resolved, opts.pd, engineOptions.calibration, opts.pd.link) } : undefined;
  return {
    description: resolved.description,
    ...(pd ? { pdLink: pd.link } : {}),
    lastStats: () => stats,
    energyOf: (s) => {
      const ledger = ledgers.get(s.index);
      return ledger ? ledgerEnergy(ledger, s) : undefined;
    },
    runStage(spec: StageSpec, index: number, firstRequestId: number): Promise<StageResult> {
      try {
        const engineSeed = seed + index * 7919 + REPEAT_SEED_STRIDE * (spec.repeat ?? 0);
        const r = runVirtualStage(resolved, spec, index, firstRequestId, clockMs, engineSeed, {
          runSeed: seed, ...(opts.drainMs !== undefined ? { drainMs: opts.drainMs } : {}), ...(opts.shard ? { shard: opts.shard } : {}),
          ...(opts.cluster && opts.cluster.replicas > 1 ? { cluster: opts.cluster } : {}),
          ...(pd ? { pd } : {}),
          energy: opts.energy !== false,
        });
        clockMs = r.result.endedAtMs;
        stats = r.stats;
        if (r.energy) {
          ledgers.set(index, r.energy);
          ledgers.delete(index - LEDGERS_KEPT);
        }
        return Promise.resolve(r.result);
      } catch (err) {
        return Promise.reject(err);
      }
    },
  };
}

export interface VirtualStageOptions {
  /** Arrivals drawn as `run --seed runSeed` draws them for row `index`; absent: from `seed` itself. */
  runSeed?: number;
  drainMs?: number;
  shard?: ShardSpec;
  cluster?: { replicas: number; router: RouterPolicy };
  /** Prefill/decode disaggregation: the split and its transfer link (kvTransferLink). */
  pd?: { split: PdSplit; link: KvTransferLink };
  /** Run the power model and keep the engine's energy ledger (engine/power.ts); off by default (it costs a little CPU per step). */
  energy?: boolean;
}

/**
 * One stage in virtual time, synchronously: `seed` seeds the engine's noise (and the arrivals, with no runSeed).
 * The records are kept, in order of completion.
 */
export function runVirtualStage(
  resolved: ResolvedSimEngine, spec: StageSpec, index: number, firstRequestId: number, startMs: number, seed: number, opts: VirtualStageOptions = {},
): { result: StageResult; stats: SimEngineStats; energy?: EnergyLedger } {
  const { limits } = spec;
  const replay = spec.kind === 'open' && spec.arrival === 'trace';
  // Virtual time never reaches a limit that is not there: a row with no end would run forever.
  if (!spec.window && limits.maxRequests === undefined && limits.maxSeconds === undefined && spec.kind !== 'burst' && !replay) {
    throw configError(`stage ${spec.label}: needs maxRequests or maxSeconds`);
  }
  if (spec.kind === 'burst' && !spec.window && limits.maxRequests === undefined && limits.maxSeconds !== undefined && spec.maxConcurrency === undefined) {
    throw configError(`stage ${spec.label}: a time-limited burst needs a concurrency cap`);
  }
  const clock = new VirtualClock(startMs);
  // `admit`: requests the engine's HTTP front would refuse fail here with its status and message.
  // A cluster: each replica its own engine (own KV and prefix cache, own seed) on the one clock, behind the router.
  const { power, ...withoutPower } = resolved.config;
  const config = opts.energy && power ? { ...withoutPower, power } : withoutPower;
  // P/D: one PdEngine (its own prefill and decode engines, seeded as a cluster's replicas) answers every request.
  const pd = opts.pd ? new PdEngine({ ...config, seed, admit: resolved.admit }, clock, opts.pd.split, opts.pd.link) : undefined;
  const engines = pd ? [] : Array.from({ length: opts.cluster?.replicas ?? 1 }, (_, i) => new Engine({ ...config, seed: seed + i, admit: resolved.admit }, clock));
  const router = opts.cluster ? new SimRouter(opts.cluster.replicas, opts.cluster.router) : undefined;
  const { ingestMs, timeScale } = resolved.config;
  // Hashing costs a tokenization per request: only for workloads that share prefixes on purpose.
  const hashPrompts = resolved.config.prefixCaching === true && spec.workload.sharesPrefixes === true;
  const records: RequestRecord[] = [];
  const live = new Map<number, { cancel(): void }>();
  /** Why the driver cancelled what is in flight (a request the engine aborts otherwise did not fit the KV cache). */
  let cancelled: string | undefined;

  // The engine answers as the HTTP sim does: a token per content chunk, the usage at the end; the record is built
  // from that exchange by the same code a real request's is (metrics/derive.ts).
  const start: StartRequest = (req, done) => {
    const item = spec.workload.item(req.itemIndex);
    const sentAtMs = clock.now();
    const hashes = hashPrompts ? itemBlockHashes(item, req.itemIndex) : undefined;
    const replica = router ? routeOf(router, item, hashes) : 0;
    const engine: SimEngine = pd ?? (engines[replica] as Engine);
    /** The replica named in the record: the router's pick, or the decode engine P/D streamed from. */
    let servedBy = router ? replica : undefined;
    router?.started(replica);
    const ex: Exchange = { sentAtMs, endAtMs: sentAtMs, contentTimesMs: [], textParts: [], done: false };
    /** Prompt tokens the prefix cache gave, as the sim reports them in usage (--enable-prompt-tokens-details). */
    let cachedTokens: number | undefined;
    const finish = (at: number): void => {
      live.delete(req.id);
      router?.ended(replica);
      ex.endAtMs = at;
      ex.usage = { promptTokens: item.promptTokens, outputTokens: ex.contentTimesMs.length, source: 'server-usage', ...(cachedTokens !== undefined ? { cachedTokens } : {}) };
      const record = buildRecord(ex, { id: req.id, stage: req.stage, warmup: req.warmup, scheduledAtMs: req.scheduledAtMs, clientQueueMs: req.clientQueueMs, item });
      if (servedBy !== undefined) record.replica = servedBy;
      done(record);
    };
    try {
      const handle = engine.submit(
        { promptTokens: item.promptTokens, maxTokens: item.outputTokens, ignoreEos: true, ...(hashes ? { blockHashes: hashes } : {}) },
        {
          ...(hashes ? { onPrefillStart: (_at: number, cached: number) => void (cachedTokens = cached) } : {}),
          onToken: (_i, at) => void ex.contentTimesMs.push(at),
          onFinish: (reason, at) => {
            ex.finishReason = reason;
            if (reason !== 'abort') {
              ex.done = true;
              return finish(at);
            }
            ex.error = cancelled !== undefined
              ? { code: 'E_ABORTED', message: cancelled }
              : { code: 'E_HTTP_STATUS', message: 'request larger than the KV cache', httpStatus: 400 };
            // A cancel aborts at once, inside the driver's own call: its answer comes after, as a transport's does.
            clock.defer(() => finish(at));
          },
        },
      );
      if (handle.route) servedBy = handle.route.decode;
      live.set(req.id, handle);
    } catch (err) {
      if (!(err instanceof SimRejectedError)) throw err;
      ex.httpStatus = err.status;
      ex.error = { code: 'E_HTTP_STATUS', message: `HTTP ${err.status}: ${err.message}`, httpStatus: err.status };
      // The front answers after reading and tokenizing the request.
      clock.setTimer(sentAtMs + ingestMs * timeScale, () => finish(clock.now()));
    }
  };

  let outcome: { err: unknown; result?: StageResult } | undefined;
  driveStage(spec, index, firstRequestId, {
    clock,
    start,
    ...(opts.runSeed !== undefined ? { seed: opts.runSeed } : { seed, arrivalSeed: seed }),
    ...(opts.drainMs !== undefined ? { drainMs: opts.drainMs } : {}),
    ...(opts.shard ? { shard: opts.shard } : {}),
    cancelInFlight: (reason) => {
      cancelled = reason ?? 'run stopped';
      for (const h of [...live.values()]) h.cancel();
    },
    accumulate: false,
    nextInline: true,
    onRecord: (record) => void records.push(record),
  }, (err, result) => (outcome = { err, ...(result ? { result } : {}) }));
  clock.runWhile(() => outcome === undefined);
  if (!outcome) throw new Error(`stage ${spec.label}: the virtual clock ran out of events before the row ended`);
  if (!outcome.result) throw outcome.err;
  records.sort((a, b) => a.endAtMs - b.endAtMs || a.id - b.id);
  // The records are kept: the summary comes from them.
  const { requestCount: _count, ...result } = outcome.result;
  if (pd) return { result: { ...result, records }, stats: pd.stats() };
  const first = engines[0] as Engine;
  // The energy ledger of one engine; a cluster's replicas keep one each, not summed here (no J/token for clusters yet).
  return { result: { ...result, records }, stats: first.stats(), ...(first.energy && engines.length === 1 ? { energy: first.energy } : {}) };
}
