import { realClock, sleepUntil } from '../core/clock.js';
import { StageAccumulator } from '../metrics/accumulator.js';
import type { RequestRecord } from '../metrics/record.js';
import type { Slo } from '../metrics/summary.js';
import { createArrivalProcess } from './arrivals.js';
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
  /** After maxSeconds, how long in-flight requests may still finish before they are cancelled. */
  drainMs?: number;
  /** Cancels whatever is still in flight (called after the drain period), saying why. */
  cancelInFlight?: (reason?: string) => void;
  onRecord?: (record: RequestRecord) => void;
  onDispatch?: () => void;
  /** Goodput SLO for the stage summary. */
  slo?: Slo;
}

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
  const { maxRequests, maxSeconds, warmupSeconds = 0 } = spec.limits;
  const deadline = maxSeconds !== undefined ? startedAtMs + maxSeconds * 1000 : Infinity;
  const warmupEnd = startedAtMs + warmupSeconds * 1000;
  const replay = spec.kind === 'open' && spec.arrival === 'trace';
  const limitCount =
    maxRequests ??
    (replay ? spec.workload.size : undefined) ??
    (spec.kind === 'burst' && maxSeconds === undefined ? DEFAULT_BURST_REQUESTS : Infinity);
  let dispatched = 0;
  let nextId = firstRequestId;
  const allocateId = (): number => nextId++;
  const take = (record: RequestRecord): void => {
    accumulator.add(record);
    opts.onRecord?.(record);
  };
  let inFlight = 0;
  const inFlightDone = new Set<Promise<void>>();
  let slotWaiter: (() => void) | undefined;
  const stopped = (): boolean => opts.signal?.aborted === true || realClock.now() >= deadline;

  const launch = (itemIndex: number, scheduledAtMs: number, clientQueueMs = 0): Promise<void> => {
    const id = allocateId();
    dispatched++;
    inFlight++;
    opts.onDispatch?.();
    const warmup = scheduledAtMs < warmupEnd && warmupSeconds > 0;
    const p = opts
      .execute({ id, stage: index, itemIndex, scheduledAtMs, clientQueueMs, warmup, spec, allocateId, emit: take })
      .then(take)
      .finally(() => {
        inFlight--;
        inFlightDone.delete(p);
        const w = slotWaiter;
        slotWaiter = undefined;
        w?.();
      });
    inFlightDone.add(p);
    return p;
  };
  const waitForSlot = (cap: number): Promise<void> =>
    inFlight < cap
      ? Promise.resolve()
      : new Promise<void>((resolve) => (slotWaiter = resolve)).then(() => waitForSlot(cap));

  if (spec.kind === 'closed') {
    const worker = async (): Promise<void> => {
      while (!stopped() && dispatched < limitCount) await launch(dispatched, realClock.now());
    };
    await Promise.all(Array.from({ length: spec.concurrency }, worker));
  } else {
    const cap = spec.maxConcurrency ?? Infinity;
    const arrivals =
      spec.kind !== 'open'
        ? { next: () => 0 }
        : replay
          ? traceArrivals(spec.workload)
          : createArrivalProcess({ kind: spec.arrival as ArrivalKindOf, rate: spec.rate, seed: opts.seed + index, ...burst(spec) });
    while (dispatched < limitCount) {
      const target = startedAtMs + arrivals.next();
      if (target >= deadline) break;
      if (target > realClock.now() + 0.05) await sleepUntil(target, opts.signal);
      let queuedMs = 0;
      if (cap !== Infinity && inFlight >= cap) {
        const waitStart = realClock.now();
        await waitForSlot(cap);
        queuedMs = realClock.now() - Math.max(waitStart, target);
      }
      if (stopped()) break;
      void launch(dispatched, target, Math.max(0, queuedMs));
    }
  }

  if (inFlightDone.size > 0) {
    const drain = Promise.all(inFlightDone);
    // The drain only bounds rows with a time limit: a row of N requests (grid, --max-requests) waits for all.
    const drainMs = deadline === Infinity ? Infinity : (opts.drainMs ?? Infinity);
    if (Number.isFinite(drainMs) && !opts.signal?.aborted) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        drain.then(() => false),
        // Counted from the row's time limit, not from the last send before it.
        new Promise<boolean>((r) => (timer = setTimeout(() => r(true), Math.max(0, deadline - realClock.now()) + drainMs))),
      ]);
      clearTimeout(timer);
      if (timedOut) opts.cancelInFlight?.(`still running ${drainMs / 1000} s after the row's time limit`);
    } else if (opts.signal?.aborted) {
      opts.cancelInFlight?.();
    }
    await drain;
  }
  return {
    spec,
    index,
    records: [],
    accumulator,
    requestCount: nextId - firstRequestId,
    startedAtMs,
    endedAtMs: realClock.now(),
    interrupted: opts.signal?.aborted === true,
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
