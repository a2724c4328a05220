import type { Clock, Timer } from '../core/clock.js';
import { StageAccumulator } from '../metrics/accumulator.js';
import type { RequestRecord } from '../metrics/record.js';
import type { Slo } from '../metrics/summary.js';
import { createArrivalProcess } from './arrivals.js';
import { DEFAULT_BURST_REQUESTS } from './profiles.js';
import { COOLDOWN_OVER, SteadyWindow } from './window.js';
import { StallWatch, stallReason } from './stall.js';
import { closedLoopCountShare, ownsArrival, shardWindowRules, shareOf, type ShardSpec } from './shard.js';
import type { Workload } from '../workload/types.js';
import type { ArrivalKind, StageResult, StageSpec } from './types.js';

/** One request (or a conversation's first turn) the driver hands to its executor. */
export interface RequestToSend {
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
  /** The executor calls this when reply bytes arrive (a streamed token, a head): the row's stall watch sees a live server. */
  onReply?: () => void;
}

/**
 * Sends one request and calls `done` with its record once it has finished — never synchronously (a later event or
 * promise continuation). Request failures are records; `fail` is for a broken executor only.
 */
export type StartRequest = (req: RequestToSend, done: (record: RequestRecord) => void, fail: (err: unknown) => void) => void;

/** What a stage run needs besides its spec: the clock it runs on and what sends its requests. */
export interface StageDriverOptions {
  clock: Clock;
  start: StartRequest;
  /** The run's seed: row `index` draws its arrivals from seed + index + REPEAT_SEED_STRIDE × repeat. */
  seed: number;
  /** This row's own arrival seed, instead of the one derived from `seed` (calibration re-predicts rows seeded as their run was). */
  arrivalSeed?: number;
  /** Stops dispatching; the caller aborts in-flight requests through cancelInFlight or its transport. */
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
  /** false: no StageAccumulator (the caller keeps the records and summarizes them itself, as predict does). */
  accumulate?: boolean;
  /** Hand open-loop requests to the executor this many ms before their time (a worker pool waits for the time itself). */
  leadMs?: number;
  /** `run --shard I/N`: send only this shard's part of the row (shard.ts). */
  shard?: ShardSpec;
  /**
   * A closed-loop stream sends its next request inside the callback that delivered the last answer, not deferred.
   * The in-process engine (predict) answers from inside its step: sent there, the next request is queued before the
   * engine forms its next batch, as an in-process benchmark's pipeline hands it over (LMDeploy's profile_throughput,
   * tables T06–T08, agree with this order; deferring it made their loaded TTFT 9.9% → 16.1% off). Over HTTP the
   * answer arrives after the step anyway, so the real clock keeps deferring (no re-entry into the transport).
   */
  nextInline?: boolean;
}

/** `--repeat`: run r of a row draws its arrivals from seed + index + r × this (a prime: no two rows' runs collide). */
export const REPEAT_SEED_STRIDE = 104_729;

/** How often a windowed row looks at its window when nothing is sent or completes. */
const WINDOW_POLL_MS = 50;

/**
 * Runs one stage on `opts.clock`, real or virtual: the one load driver of `run` and `predict`. Open loops walk
 * absolute target times; closed loops keep N streams busy; bursts schedule everything at t=0 and dispatch as the
 * concurrency cap allows. Written as callbacks on the clock (no awaits), so a virtual clock runs a stage to its end
 * synchronously; `onEnd` gets the result (or the executor's failure).
 */
export function driveStage(
  spec: StageSpec, index: number, firstRequestId: number, opts: StageDriverOptions, onEnd: (err: unknown, result?: StageResult) => void,
): void {
  const { clock } = opts;
  const accumulator = opts.accumulate === false ? undefined : new StageAccumulator(opts.slo);
  const startedAtMs = clock.now();
  const shard = opts.shard ?? { index: 0, count: 1 };
  const sharded = shard.count > 1;
  const { maxRequests, maxSeconds, warmupSeconds = 0 } = spec.limits;
  const replay = spec.kind === 'open' && spec.arrival === 'trace';
  const userCap = shareOf(spec.kind === 'closed' ? spec.concurrency : (spec.maxConcurrency ?? Infinity), shard);
  // Open loops and bursts deal arrivals k mod N; closed loops deal counts among the shards that have streams.
  const countShare = (total: number): number => (spec.kind === 'closed' ? closedLoopCountShare(total, spec.concurrency, shard) : shareOf(total, shard));
  const window = new SteadyWindow(shardWindowRules(spec.window, shard, countShare), startedAtMs, userCap);
  // Batch rows (no window) keep the plain limits: a request count, or a deadline.
  const deadline = !spec.window && maxSeconds !== undefined ? startedAtMs + maxSeconds * 1000 : Infinity;
  const warmupEnd = startedAtMs + warmupSeconds * 1000;
  // A count limit bounds the whole row: shards count global arrivals against it (closed loops their own share).
  const limitCount = spec.window
    ? Infinity
    : (maxRequests ?? (replay ? spec.workload.size : undefined) ?? (spec.kind === 'burst' && maxSeconds === undefined ? DEFAULT_BURST_REQUESTS : Infinity));
  // This shard's part of the count: arrivals k < limit with k mod N = I (closed loops: its share of the requests).
  const ownLimit = countShare(limitCount);
  // Request ids are run-wide, so they also pick fresh workload items for every row (prompts never repeat across rows);
  // a finite workload (dataset) continues where the earlier rows left it (spec.firstItem), walking it in order.
  const itemBase = replay ? 0 : (spec.firstItem ?? firstRequestId);
  let dispatched = 0;
  /** Arrivals of the global schedule walked so far (shards skip the ones that are not theirs). */
  let arrivalsSeen = 0;
  let nextLocal = firstRequestId;
  // Shards number their requests local × N + I: unique over every shard with no exchange between them.
  const allocateId = (): number => (sharded ? nextLocal++ * shard.count + shard.index : nextLocal++);
  /** Which of this shard's requests in the row an id is (0-based). */
  const ownSeq = (id: number): number => (id - shard.index) / shard.count - firstRequestId;
  const take = (record: RequestRecord): void => {
    if (sharded) record.shard = shard.index;
    if (spec.repeat !== undefined) record.repeat = spec.repeat;
    accumulator?.add(record);
    opts.onRecord?.(record);
  };
  let inFlight = 0;
  /** The sender waiting for a free slot (or for the row to stop). */
  let slotWaiter: (() => void) | undefined;
  const wake = (): void => {
    const w = slotWaiter;
    slotWaiter = undefined;
    if (w) clock.defer(w);
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
  let executorError: { err: unknown } | undefined;
  const cut = (reason: string): void => {
    if (cutInFlight) return;
    cutInFlight = true;
    opts.cancelInFlight?.(reason);
  };
  const stopped = (): boolean => {
    if (halted || opts.signal?.aborted === true || clock.now() >= deadline || dispatched >= ownLimit) return true;
    return !window.sending(clock.now());
  };
  /**
   * The cool-down (window.ts) keeps the load on until every request measured in the window has finished; then what
   * it still has in flight is cancelled. Measured requests still running --drain after the window closed are cut.
   */
  const checkCooldown = (): void => {
    if (cutInFlight) return;
    const now = clock.now();
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

  /** Sends one request; `next` (a closed-loop stream) runs once it has finished. */
  const launch = (scheduledAtMs: number, clientQueueMs: number, arrival: number | undefined, next?: () => void): void => {
    const id = allocateId();
    // Shards: the trace entry or the id picks the item, so no two shards send the same prompt.
    // Shards deal items as they deal ids: this shard's n-th request of the row takes item (base + n) × N + I.
    const itemIndex = replay ? (arrival ?? dispatched) : sharded ? (itemBase + ownSeq(id)) * shard.count + shard.index : itemBase + dispatched;
    dispatched++;
    inFlight++;
    stall?.onSend();
    opts.onDispatch?.();
    const measured = window.onSend(clock.now());
    const warmup = spec.window ? !measured : clock.now() < warmupEnd && warmupSeconds > 0;
    // Sent after the window closed: the cool-down that keeps the load on for the window's last requests.
    const cooldown = !measured && window.closedAtMs !== null;
    const keep = cooldown
      ? (record: RequestRecord): void => {
          record.cooldown = true;
          take(record);
        }
      : take;
    const finished = (): void => {
      inFlight--;
      stall?.onDone();
      wake();
      if (next) {
        if (opts.nextInline) next();
        else clock.defer(next);
      }
      if (sendingEndedAt !== undefined && inFlight === 0) end();
    };
    opts.start(
      { id, stage: index, itemIndex, scheduledAtMs, clientQueueMs, warmup, spec, allocateId, emit: keep, ...(stall ? { onReply: stallReply } : {}) },
      (record) => {
        keep(record);
        completedInRow++;
        window.onComplete(record);
        checkCooldown();
        finished();
      },
      (err) => {
        executorError ??= { err };
        halted = true;
        finished();
      },
    );
  };

  // The window opens and closes on time even when nothing is sent or completes (a sender may be waiting for a slot).
  let pollTimer: Timer | undefined;
  if (spec.window) {
    const poll = (): void => {
      checkCooldown();
      if (stopped()) return wake();
      pollTimer = clock.setTimer(clock.now() + WINDOW_POLL_MS, poll);
    };
    pollTimer = clock.setTimer(clock.now() + WINDOW_POLL_MS, poll);
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
        }, clock)
      : undefined;
  const stallReply = (): void => stall?.onReply();

  let sendingEndedAt: number | undefined;
  let drainTimer: Timer | undefined;
  /** Nothing more is sent: close the window, cancel what should not run on, and wait for what is in flight. */
  const sendingOver = (): void => {
    pollTimer?.cancel();
    sendingEndedAt = clock.now();
    window.close(sendingEndedAt);
    // An over-saturated row's queue would take long to drain and measures only the backlog: cancel it now.
    const overSaturated = window.overSaturatedReason;
    if (overSaturated !== undefined && inFlight > 0) opts.cancelInFlight?.(`the row stopped ${overSaturated}`);
    // Every measured request has finished: what is left is unmeasured (the cool-down's, or a ramp-up straggler).
    if (window.measuredRequestsDone && inFlight > 0) cut(COOLDOWN_OVER);
    if (inFlight === 0) return end();
    if (Number.isFinite(drainMs) && !opts.signal?.aborted && !cutInFlight) {
      // Counted from the row's time limit (the end of its window), not from the last send before it.
      const limitAt = deadline !== Infinity ? deadline : sendingEndedAt;
      drainTimer = clock.setTimer(Math.max(limitAt, clock.now()) + drainMs, () => {
        opts.cancelInFlight?.(`still running ${drainMs / 1000} s after the row's time limit`);
      });
    } else if (opts.signal?.aborted) {
      opts.cancelInFlight?.();
    }
  };
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    drainTimer?.cancel();
    stall?.stop();
    opts.signal?.removeEventListener('abort', onRunAbort);
    if (executorError) return onEnd(executorError.err);
    onEnd(undefined, {
      spec,
      index,
      records: [],
      ...(accumulator ? { accumulator } : {}),
      requestCount: nextLocal - firstRequestId,
      startedAtMs,
      endedAtMs: clock.now(),
      ...(spec.window ? { window: window.outcome(sendingEndedAt as number) } : {}),
      ...(sharded ? { loadShare: 1 / shard.count } : {}),
      interrupted: opts.signal?.aborted === true,
      ...(stalled ? { stalled } : {}),
    });
  };

  if (spec.kind === 'closed') {
    // N streams: each sends its next request when its previous one has finished.
    let streams = userCap;
    const stream = (): void => {
      if (!stopped()) return launch(clock.now(), 0, undefined, stream);
      if (--streams === 0) sendingOver();
    };
    if (streams === 0) sendingOver();
    for (let i = 0; i < userCap; i++) stream();
    return;
  }
  const arrivals =
    spec.kind !== 'open'
      ? { next: () => 0 }
      : replay
        ? traceArrivals(spec.workload)
        : createArrivalProcess({ kind: spec.arrival as ArrivalKindOf, rate: spec.rate, seed: opts.arrivalSeed ?? opts.seed + index + REPEAT_SEED_STRIDE * (spec.repeat ?? 0), ...burst(spec) });
  const lead = opts.leadMs ?? 0;
  /** The arrival the sender holds: sleeping until its time, or waiting for a slot (since waitStart). */
  let held: { target: number; arrival: number; waitStart?: number } | undefined;
  let sleeping: { timer: Timer; resume: () => void } | undefined;
  rowStop.signal.addEventListener('abort', () => {
    const s = sleeping;
    sleeping = undefined;
    s?.timer.cancel();
    if (s) clock.defer(s.resume);
  }, { once: true });
  const sleepThen = (atMs: number, resume: () => void): void => {
    if (rowStop.signal.aborted) return clock.defer(resume);
    const timer = clock.setTimer(atMs, () => {
      sleeping = undefined;
      resume();
    }, { precise: true });
    sleeping = { timer, resume };
  };
  // The open-loop sender: a loop that leaves only to sleep until an arrival's time or to wait for a slot.
  const sendLoop = (): void => {
    for (;;) {
      let h = held;
      if (!h) {
        if (stopped()) return sendingOver();
        const target = startedAtMs + arrivals.next();
        const arrival = arrivalsSeen++;
        if (target >= deadline) return sendingOver();
        if (sharded && !ownsArrival(arrival, shard)) continue;
        h = held = { target, arrival };
        if (target - lead > clock.now() + 0.05) return sleepThen(target - lead, sendLoop);
      }
      if (h.waitStart === undefined) {
        if (stopped()) return sendingOver();
        if (inFlight >= window.inFlightCap()) h.waitStart = clock.now();
      }
      let queuedMs = 0;
      if (h.waitStart !== undefined) {
        // Waits until fewer than the cap (which a throughput row's search may raise) are in flight, or the row stops.
        if (inFlight >= window.inFlightCap() && !stopped()) {
          slotWaiter = sendLoop;
          return;
        }
        queuedMs = clock.now() - Math.max(h.waitStart, h.target);
      }
      if (stopped()) return sendingOver();
      // A burst schedules everything at the row's start: all the time before a request goes is waiting for a slot.
      if (spec.kind === 'burst') queuedMs = clock.now() - h.target;
      held = undefined;
      launch(h.target, Math.max(0, queuedMs), h.arrival);
    }
  };
  sendLoop();
}

/** driveStage as a promise. */
export function runStage(spec: StageSpec, index: number, firstRequestId: number, opts: StageDriverOptions): Promise<StageResult> {
  return new Promise((resolve, reject) => driveStage(spec, index, firstRequestId, opts, (err, result) => (err !== undefined || !result ? reject(err) : resolve(result))));
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
