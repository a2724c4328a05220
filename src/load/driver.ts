import { realClock, sleepUntil } from '../core/clock.js';
import { StageAccumulator } from '../metrics/accumulator.js';
import type { RequestRecord } from '../metrics/record.js';
import type { Slo } from '../metrics/summary.js';
import { createArrivalProcess } from './arrivals.js';
import { COOLDOWN_OVER, SteadyWindow } from './window.js';
import { StallWatch, stallReason } from './stall.js';
import { closedLoopCountShare, ownsArrival, shardWindowRules, shareOf, type ShardSpec } from './shard.js';
import type { Workload } from '../workload/types.js';
import type { ArrivalKind, StageResult, StageSpec } from './types.js';

/**
 * Sends one request — or, for a multi-turn workload, one whole conversation — and resolves with its
 * record(s). Request failures are data, never rejections. Extra turns take ids from `allocateId`.
 */
export type ExecuteRequest = (req: {
  id: number;
  stage: number;
  /** Index into the stage's workload. */
  itemIndex: number;
  scheduledAtMs: number;
  /** Time this request waited for a client concurrency slot before it could be sent. */
  clientQueueMs: number;
  warmup: boolean;
  spec: StageSpec;
  allocateId: () => number;
  /** Records of finished turns, as they finish (conversations only). */
  emit: (record: RequestRecord) => void;
}) => Promise<RequestRecord>;

export interface DriverOptions {
  execute: ExecuteRequest;
  seed: number;
  /** Stops dispatching; the caller aborts in-flight requests through its transport. */
  signal?: AbortSignal;
  /**
   * After maxSeconds (a windowed row: after its window closed, while the cool-down keeps the load on), how long
   * in-flight requests may still finish before they are cancelled.
   */
  drainMs?: number;
  /** Cancels whatever is still in flight (over-saturation, the cool-down's end, the drain limit, a silent server), saying why. */
  cancelInFlight?: (reason?: string) => void;
  onRecord?: (record: RequestRecord) => void;
  onDispatch?: () => void;
  /** Goodput SLO for the stage summary. */
  slo?: Slo;
  /** Hand open-loop requests to `execute` this many ms before their time (a worker pool waits for the time itself). */
  leadMs?: number;
  /** `run --shard I/N`: send only this shard's part of the row (shard.ts). */
  shard?: ShardSpec;
}

/** `--repeat`: run r of a row draws its arrivals from seed + index + r × this (a prime: no two rows' runs collide). */
export const REPEAT_SEED_STRIDE = 104_729;

/** Default request count for burst (throughput) stages with no limit at all. */
export const DEFAULT_BURST_REQUESTS = 1000;

/**
 * Runs one stage on the real clock. Open loop walks absolute target times; closed loop keeps N
 * streams busy; burst schedules everything at t=0 and dispatches as the concurrency cap allows.
 */
export async function runStageRealtime(
  spec: StageSpec,
  index: number,
  firstRequestId: number,
  opts: DriverOptions,
): Promise<StageResult> {
  const accumulator = new StageAccumulator(opts.slo);
  const startedAtMs = realClock.now();
  const shard = opts.shard ?? { index: 0, count: 1 };
  const sharded = shard.count > 1;
  const { maxRequests, maxSeconds, warmupSeconds = 0 } = spec.limits;
  const replay = spec.kind === 'open' && spec.arrival === 'trace';
  const userCap = shareOf(spec.kind === 'closed' ? spec.concurrency : (spec.maxConcurrency ?? Infinity), shard);
  // Open loops and bursts deal arrivals k mod N; closed loops deal counts among the shards that have streams.
  const countShare = (total: number): number => (spec.kind === 'closed' ? closedLoopCountShare(total, spec.concurrency, shard) : shareOf(total, shard));
  const rules = shardWindowRules(spec.window, shard, countShare);
  const window = new SteadyWindow(rules, startedAtMs, userCap);
  // Batch rows (no window) keep the plain limits: a request count, or a deadline.
  const deadline = !spec.window && maxSeconds !== undefined ? startedAtMs + maxSeconds * 1000 : Infinity;
  const warmupEnd = startedAtMs + warmupSeconds * 1000;
  // A count limit bounds the whole row: shards count global arrivals against it (closed loops their own share).
  const limitCount = spec.window
    ? Infinity
    : (maxRequests ?? (replay ? spec.workload.size : undefined) ?? (spec.kind === 'burst' && maxSeconds === undefined ? DEFAULT_BURST_REQUESTS : Infinity));
  // This shard's part of the count: arrivals k < limit with k mod N = I (closed loops: its share of the requests).
  const ownLimit = countShare(limitCount);
  // Request ids are run-wide, so they also pick fresh workload items for every row (prompts never repeat across rows).
  const itemBase = replay ? 0 : firstRequestId;
  let dispatched = 0;
  /** Arrivals of the global schedule walked so far (shards skip the ones that are not theirs). */
  let arrivalsSeen = 0;
  let nextLocal = firstRequestId;
  // Shards number their requests local × N + I: unique over every shard with no exchange between them.
  const allocateId = (): number => (sharded ? nextLocal++ * shard.count + shard.index : nextLocal++);
  const take = (record: RequestRecord): void => {
    if (sharded) record.shard = shard.index;
    if (spec.repeat !== undefined) record.repeat = spec.repeat;
    accumulator.add(record);
    opts.onRecord?.(record);
  };
  let inFlight = 0;
  const inFlightDone = new Set<Promise<void>>();
  let slotWaiter: (() => void) | undefined;
  const wake = (): void => {
    const w = slotWaiter;
    slotWaiter = undefined;
    w?.();
  };
  // The drain bounds rows with a time limit only: a row of N requests (grid, --max-requests) waits for all.
  const timeLimited = deadline !== Infinity || spec.window?.measureMs !== undefined;
  const drainMs = timeLimited ? (opts.drainMs ?? Infinity) : Infinity;
  // Wakes a sender sleeping until its next arrival when the row stops (a silent server, the end of the cool-down).
  const rowStop = new AbortController();
  const onRunAbort = (): void => rowStop.abort();
  opts.signal?.addEventListener('abort', onRunAbort, { once: true });
  /** The row stopped itself: nothing more is sent (a silent server). */
  let halted = false;
  let stalled: StageResult['stalled'];
  /** What is still in flight was cancelled by the row itself (the cool-down's leftovers, or the drain limit). */
  let cutInFlight = false;
  let completedInRow = 0;
  const cut = (reason: string): void => {
    if (cutInFlight) return;
    cutInFlight = true;
    opts.cancelInFlight?.(reason);
  };
  const stopped = (): boolean => {
    if (halted || opts.signal?.aborted === true || realClock.now() >= deadline || dispatched >= ownLimit) return true;
    return !window.sending(realClock.now());
  };
  /**
   * The cool-down (window.ts) keeps the load on until every request measured in the window has finished; then what
   * it still has in flight is cancelled. Measured requests still running --drain after the window closed are cut.
   */
  const checkCooldown = (): void => {
    if (cutInFlight) return;
    const now = realClock.now();
    if (window.measuredRequestsDone) {
      if (inFlight > 0) cut(COOLDOWN_OVER);
      rowStop.abort();
      wake();
    } else if (window.coolingDown && now >= (window.closedAtMs as number) + drainMs) {
      window.close(now);
      cut(`still running ${drainMs / 1000} s after the row's time limit`);
      rowStop.abort();
      wake();
    }
  };

  const launch = (scheduledAtMs: number, clientQueueMs = 0, arrival?: number): Promise<void> => {
    const id = allocateId();
    // Shards: the trace entry or the id picks the item, so no two shards send the same prompt.
    const itemIndex = replay ? (arrival ?? dispatched) : sharded ? id : itemBase + dispatched;
    dispatched++;
    inFlight++;
    stall?.onSend();
    opts.onDispatch?.();
    const measured = window.onSend(realClock.now());
    const warmup = spec.window ? !measured : realClock.now() < warmupEnd && warmupSeconds > 0;
    // Sent after the window closed: the cool-down that keeps the load on for the window's last requests.
    const cooldown = !measured && window.closedAtMs !== null;
    const keep = cooldown
      ? (record: RequestRecord): void => {
          record.cooldown = true;
          take(record);
        }
      : take;
    const p = opts
      .execute({ id, stage: index, itemIndex, scheduledAtMs, clientQueueMs, warmup, spec, allocateId, emit: keep })
      .then((record) => {
        keep(record);
        completedInRow++;
        window.onComplete(record);
        checkCooldown();
      })
      .finally(() => {
        inFlight--;
        stall?.onDone();
        inFlightDone.delete(p);
        wake();
      });
    inFlightDone.add(p);
    return p;
  };
  // Waits until fewer than the cap (which a throughput row's search may raise) are in flight, or the row stops.
  const waitForSlot = async (): Promise<void> => {
    while (inFlight >= window.inFlightCap() && !stopped()) {
      await new Promise<void>((resolve) => (slotWaiter = resolve));
    }
  };
  // The window opens and closes on time even when nothing is sent or completes (a sender may be waiting for a slot).
  let closeTimer: NodeJS.Timeout | undefined;
  if (spec.window) {
    const poll = (): void => {
      checkCooldown();
      if (stopped()) return wake();
      closeTimer = setTimeout(poll, 50);
    };
    closeTimer = setTimeout(poll, 50);
  }
  // A server that accepts requests and never answers: stop the row, and cancel what is open (stall.ts).
  const stallMs = spec.stallMs;
  const stall =
    stallMs !== undefined && Number.isFinite(stallMs)
      ? new StallWatch(stallMs, startedAtMs, (open, now) => {
          const reason = stallReason(stallMs, open);
          halted = true;
          stalled = { reason, completed: completedInRow };
          window.stop(now, reason);
          cut(reason);
          rowStop.abort();
          wake();
        })
      : undefined;

  if (spec.kind === 'closed') {
    const worker = async (): Promise<void> => {
      while (!stopped()) await launch(realClock.now());
    };
    await Promise.all(Array.from({ length: userCap }, worker));
  } else {
    const arrivals =
      spec.kind !== 'open'
        ? { next: () => 0 }
        : replay
          ? traceArrivals(spec.workload)
          : createArrivalProcess({ kind: spec.arrival as ArrivalKindOf, rate: spec.rate, seed: opts.seed + index + REPEAT_SEED_STRIDE * (spec.repeat ?? 0), ...burst(spec) });
    const lead = opts.leadMs ?? 0;
    while (!stopped()) {
      const target = startedAtMs + arrivals.next();
      const arrival = arrivalsSeen++;
      if (target >= deadline) break;
      if (sharded && !ownsArrival(arrival, shard)) continue;
      if (target - lead > realClock.now() + 0.05) await sleepUntil(target - lead, rowStop.signal);
      if (stopped()) break;
      let queuedMs = 0;
      if (inFlight >= window.inFlightCap()) {
        const waitStart = realClock.now();
        await waitForSlot();
        queuedMs = realClock.now() - Math.max(waitStart, target);
      }
      if (stopped()) break;
      // A burst schedules everything at the row's start: all the time before a request goes is waiting for a slot.
      if (spec.kind === 'burst') queuedMs = realClock.now() - target;
      void launch(target, Math.max(0, queuedMs), arrival);
    }
  }
  clearTimeout(closeTimer);
  const sendingEndedAt = realClock.now();
  window.close(sendingEndedAt);
  // An over-saturated row's queue would take long to drain and measures only the backlog: cancel it now.
  const overSaturated = window.overSaturatedReason;
  if (overSaturated !== undefined && inFlightDone.size > 0) opts.cancelInFlight?.(`the row stopped ${overSaturated}`);
  // Every measured request has finished: what is left is unmeasured (the cool-down's, or a ramp-up straggler).
  if (window.measuredRequestsDone && inFlightDone.size > 0) cut(COOLDOWN_OVER);

  if (inFlightDone.size > 0) {
    const drain = Promise.all(inFlightDone);
    if (Number.isFinite(drainMs) && !opts.signal?.aborted && !cutInFlight) {
      let timer: NodeJS.Timeout | undefined;
      // Counted from the row's time limit (the end of its window), not from the last send before it.
      const limitAt = deadline !== Infinity ? deadline : sendingEndedAt;
      const timedOut = await Promise.race([
        drain.then(() => false),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(true), Math.max(0, limitAt - realClock.now()) + drainMs))),
      ]);
      clearTimeout(timer);
      if (timedOut) opts.cancelInFlight?.(`still running ${drainMs / 1000} s after the row's time limit`);
    } else if (opts.signal?.aborted) {
      opts.cancelInFlight?.();
    }
    await drain;
  }
  stall?.stop();
  opts.signal?.removeEventListener('abort', onRunAbort);
  const endedAtMs = realClock.now();
  return {
    spec,
    index,
    records: [],
    accumulator,
    requestCount: nextLocal - firstRequestId,
    startedAtMs,
    endedAtMs,
    ...(spec.window ? { window: window.outcome(sendingEndedAt) } : {}),
    ...(sharded ? { loadShare: 1 / shard.count } : {}),
    interrupted: opts.signal?.aborted === true,
    ...(stalled ? { stalled } : {}),
  };
}

type ArrivalKindOf = Exclude<ArrivalKind, 'trace'>;

/** Trace replay: each item says when it goes (already divided by the time scale). */
function traceArrivals(workload: Workload): { next(): number } {
  let i = 0;
  return { next: () => workload.item(i++).arrivalOffsetMs ?? 0 };
}

function burst(spec: StageSpec): { burstiness?: number } {
  return spec.kind === 'open' && spec.burstiness !== undefined ? { burstiness: spec.burstiness } : {};
}
