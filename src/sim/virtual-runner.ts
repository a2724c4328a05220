import { REPEAT_SEED_STRIDE } from '../load/driver.js';
import { configError } from '../core/errors.js';
import { createArrivalProcess } from '../load/arrivals.js';
import { COOLDOWN_OVER, SteadyWindow } from '../load/window.js';
import type { StageResult, StageRunner, StageSpec } from '../load/types.js';
import type { RequestRecord } from '../metrics/record.js';
import { type ResolvedSimEngine, type SimEngineDescription, type SimEngineOptions, resolveSimEngine } from './create.js';
import { VirtualDriver } from './des/virtual-driver.js';
import { Engine, SimRejectedError } from './engine/engine.js';
import type { SimEngineStats } from './types.js';
import type { WorkItem } from '../workload/types.js';
import { blockHashes, chatTokenIds, completionTokenIds } from './wire/prompt-hash.js';

/** Prompt block hashes of an item with text, as the HTTP sim would compute them (prefix caching). */
function itemBlockHashes(item: WorkItem): { blockHashes?: number[] } {
  const ids = item.messages && item.messages.length > 0 ? chatTokenIds(item.messages) : item.prompt ? completionTokenIds(item.prompt) : undefined;
  return ids ? { blockHashes: blockHashes(ids) } : {};
}

export interface VirtualRunnerOptions {
  /** Seeds arrivals and engine noise. */
  seed?: number;
}

export interface VirtualStageRunner extends StageRunner {
  readonly description: SimEngineDescription;
  /** Engine counters of the last stage run. */
  lastStats(): SimEngineStats | undefined;
}

/**
 * Runs stages against the simulated engine in virtual time: the same records a real client would
 * compute, in milliseconds of CPU. Stages follow each other on one virtual timeline.
 */
export function createVirtualStageRunner(engineOptions: SimEngineOptions, opts: VirtualRunnerOptions = {}): VirtualStageRunner {
  const resolved = resolveSimEngine(engineOptions);
  const seed = opts.seed ?? engineOptions.seed ?? 1;
  let clockMs = 0;
  let stats: SimEngineStats | undefined;
  return {
    description: resolved.description,
    lastStats: () => stats,
    runStage(spec: StageSpec, index: number, firstRequestId: number): Promise<StageResult> {
      try {
        const r = runVirtualStage(resolved, spec, index, firstRequestId, clockMs, seed + index * 7919 + REPEAT_SEED_STRIDE * (spec.repeat ?? 0));
        clockMs = r.result.endedAtMs;
        stats = r.stats;
        return Promise.resolve(r.result);
      } catch (err) {
        return Promise.reject(err);
      }
    },
  };
}

interface Pending {
  scheduledAtMs: number;
}

export function runVirtualStage(
  resolved: ResolvedSimEngine, spec: StageSpec, index: number, firstRequestId: number, startMs: number, seed: number,
): { result: StageResult; stats: SimEngineStats } {
  const { limits } = spec;
  const replay = spec.kind === 'open' && spec.arrival === 'trace';
  const maxRequests = spec.window ? Infinity : (limits.maxRequests ?? Infinity);
  if (!spec.window && maxRequests === Infinity && limits.maxSeconds === undefined) {
    throw configError(`stage ${spec.label}: needs maxRequests or maxSeconds`);
  }
  if (spec.kind === 'burst' && !spec.window && maxRequests === Infinity && spec.maxConcurrency === undefined) {
    throw configError(`stage ${spec.label}: a time-limited burst needs a concurrency cap`);
  }
  const driver = new VirtualDriver(startMs);
  // `admit`: requests the engine's HTTP front would refuse fail here with its status and message.
  const engine = new Engine({ ...resolved.config, seed, admit: resolved.admit }, driver);
  const t0 = startMs;
  const deadline = !spec.window && limits.maxSeconds !== undefined ? t0 + limits.maxSeconds * 1000 : Infinity;
  const warmupEnd = t0 + (limits.warmupSeconds ?? 0) * 1000;
  const window = new SteadyWindow(spec.window, t0, spec.kind === 'closed' ? spec.concurrency : (spec.maxConcurrency ?? Infinity));
  const cap = (): number => window.inFlightCap();
  // Run-wide ids pick the workload items, as in real runs (trace replays walk the trace in order).
  const itemBase = replay ? 0 : firstRequestId;
  // Hashing costs a tokenization per request: only for workloads that share prefixes on purpose.
  const hashPrompts = resolved.config.prefixCaching === true && spec.workload.sharesPrefixes === true;
  const records: RequestRecord[] = [];
  const queue: Pending[] = [];
  const live = new Map<number, { cancel(): void }>();
  let sent = 0;
  let inFlight = 0;
  let arrivalsDone = false;
  let stopped = false;
  let endedAt = t0;
  let sendingEndedAt: number | undefined;

  const canSend = (): boolean => {
    const ok = !stopped && sent < maxRequests && driver.now() < deadline && window.sending(driver.now());
    if (!ok && sendingEndedAt === undefined) sendingEndedAt = driver.now();
    return ok;
  };

  const send = (scheduledAtMs: number): void => {
    const k = sent++;
    const id = firstRequestId + k;
    const item = spec.workload.item(itemBase + k);
    const sentAtMs = driver.now();
    const measured = window.onSend(sentAtMs);
    // Sent after the window closed: the cool-down that keeps the load on for the window's last requests.
    const cooldown = !measured && window.closedAtMs !== null;
    const rec: RequestRecord = {
      id, stage: index, warmup: spec.window ? !measured : sentAtMs < warmupEnd, ...(cooldown ? { cooldown: true } : {}), status: 'ok', scheduledAtMs, sentAtMs,
      dispatchLagMs: sentAtMs - scheduledAtMs, clientQueueMs: sentAtMs - scheduledAtMs, endAtMs: sentAtMs, chunkGapsMs: [], chunks: 0,
      requestedPromptTokens: item.promptTokens, requestedOutputTokens: item.outputTokens,
      promptTokens: item.promptTokens, outputTokens: 0, tokenCountSource: 'server-usage',
      promptTokenSource: 'server-usage', clientPromptTokens: item.promptTokens,
    };
    inFlight++;
    let last = 0;
    const done = (at: number): void => {
      live.delete(id);
      inFlight--;
      rec.endAtMs = at;
      rec.e2eMs = at - sentAtMs;
      rec.queuedE2eMs = at - scheduledAtMs;
      if (rec.outputTokens > 0) {
        rec.latencyPerTokenMs = rec.e2eMs / (rec.promptTokens + rec.outputTokens);
        rec.latencyPerOutputTokenMs = rec.e2eMs / rec.outputTokens;
      }
      if (at > endedAt) endedAt = at;
      if (spec.repeat !== undefined) rec.repeat = spec.repeat;
      records.push(rec);
      window.onComplete(rec);
      // As the real driver does: the backlog of an over-saturated row is cancelled, not drained; once every request
      // measured in the window has finished, what the cool-down still has in flight is cancelled too.
      if ((window.overSaturatedReason !== undefined || window.measuredRequestsDone) && !stopped) {
        stopped = true;
        for (const h of [...live.values()]) h.cancel();
      }
      next();
    };
    try {
      const h = engine.submit(
        { promptTokens: item.promptTokens, maxTokens: item.outputTokens, ignoreEos: true, ...(hashPrompts ? itemBlockHashes(item) : {}) },
        {
          onToken(i, at) {
            if (i === 0) {
              rec.firstTokenAtMs = at;
              rec.ttftMs = at - sentAtMs;
            } else {
              rec.chunkGapsMs.push(at - last);
            }
            last = at;
            rec.lastTokenAtMs = at;
            rec.chunks++;
            rec.outputTokens++;
          },
          onFinish(reason, at) {
            rec.finishReason = reason;
            if (reason === 'abort') {
              rec.status = stopped ? 'incomplete' : 'error';
              rec.error = stopped
                ? { code: 'E_ABORTED', message: window.overSaturatedReason ? `cancelled: the row stopped ${window.overSaturatedReason}` : window.measuredRequestsDone ? COOLDOWN_OVER : 'stage time limit reached' }
                : { code: 'E_HTTP_STATUS', message: 'request larger than the KV cache', httpStatus: 400 };
            } else if (rec.outputTokens > 1 && rec.firstTokenAtMs !== undefined) {
              rec.itlMs = (at - rec.firstTokenAtMs) / (rec.outputTokens - 1);
            }
            done(at);
          },
        },
      );
      live.set(id, h);
    } catch (err) {
      if (!(err instanceof SimRejectedError)) throw err;
      rec.status = 'error';
      rec.error = { code: 'E_HTTP_STATUS', message: `HTTP ${err.status}: ${err.message}`, httpStatus: err.status };
      // The front answers after reading and tokenizing the request; later, not re-entrantly, so a closed
      // loop of refused requests neither recurses nor stands still in virtual time.
      const { ingestMs, timeScale } = resolved.config;
      driver.schedule(sentAtMs + ingestMs * timeScale, () => done(driver.now()));
    }
  };

  // Called when a slot frees (and at the start): fill it from the client queue or the closed loop.
  function next(): void {
    if (spec.kind === 'closed') {
      if (canSend()) send(driver.now());
      return;
    }
    if (spec.kind === 'burst' && maxRequests === Infinity) {
      // Everything is scheduled at t0; the cap decides when each goes, until the window closes.
      while (inFlight < cap() && canSend()) send(t0);
      return;
    }
    while (queue.length > 0 && inFlight < cap() && canSend()) send((queue.shift() as Pending).scheduledAtMs);
  }

  if (spec.kind === 'closed') {
    for (let i = 0; i < spec.concurrency && canSend(); i++) send(t0);
    arrivalsDone = true;
  } else if (spec.kind === 'burst') {
    if (maxRequests !== Infinity) for (let i = 0; i < maxRequests; i++) queue.push({ scheduledAtMs: t0 });
    arrivalsDone = true;
    next();
  } else {
    let traced = 0;
    const arrivals =
      spec.arrival === 'trace'
        ? { next: () => spec.workload.item(traced++).arrivalOffsetMs ?? 0 }
        : createArrivalProcess({ kind: spec.arrival, rate: spec.rate, seed, ...(spec.burstiness !== undefined ? { burstiness: spec.burstiness } : {}) });
    let planned = 0;
    const scheduleNext = (): void => {
      if (planned >= maxRequests) {
        arrivalsDone = true;
        return;
      }
      const at = t0 + arrivals.next();
      if (at >= deadline || window.closed) {
        arrivalsDone = true;
        return;
      }
      planned++;
      driver.schedule(at, () => {
        if (!canSend()) {
          arrivalsDone = true;
          queue.length = 0;
          return;
        }
        queue.push({ scheduledAtMs: at });
        next();
        scheduleNext();
      });
    };
    scheduleNext();
  }
  if (spec.window) {
    // Sends happen on arrivals and completions only: tick so that the window opens and closes on time, as the
    // real-time driver's 50 ms poll does.
    const tick = (): void => {
      if (canSend()) driver.schedule(driver.now() + 50, tick);
    };
    driver.schedule(t0 + 50, tick);
  }
  if (deadline !== Infinity) {
    // Stop sending at the deadline and let requests in flight finish: virtual time costs nothing, so
    // unlike `inferbench run` there is no drain limit and no request is cut.
    driver.schedule(deadline, () => {
      arrivalsDone = true;
      queue.length = 0;
    });
  }
  driver.runWhile(() => !(arrivalsDone && inFlight === 0 && (queue.length === 0 || !canSend())));
  const closedAt = sendingEndedAt ?? endedAt;
  window.close(closedAt);
  records.sort((a, b) => a.endAtMs - b.endAtMs || a.id - b.id);
  return {
    result: {
      spec, index, records, startedAtMs: t0, endedAtMs: endedAt, interrupted: false,
      ...(spec.window ? { window: window.outcome(closedAt) } : {}),
    },
    stats: engine.stats(),
  };
}
