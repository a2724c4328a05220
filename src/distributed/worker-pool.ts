/**
 * `run --workers N`: N worker threads, each with its own event loop and undici pool, behind the same three
 * calls as one HttpTarget (send, abortAll, close). The coordinator keeps the schedule, the windows, the records
 * and the files; a worker only sends and stamps. Threads, not processes: a thread starts in ~30 ms and hands an
 * exchange back by structured clone without JSON; both share CLOCK_MONOTONIC, and the offset between their
 * performance.now() clocks is measured at start (clock-offset.ts) and reported.
 */
import { performance } from 'node:perf_hooks';
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../core/module-worker.js';
import { InferbenchError } from '../core/errors.js';
import type { Dialect, GenerationRequest, HttpRequestPlan } from '../dialects/types.js';
import type { Exchange, Timeouts } from '../transport/exchange.js';
import { measureClockBase } from './clock-offset.js';
import type { FromWorker, ToWorker, WorkerSetup, WorkerStats } from './protocol.js';
import type { ExchangeSender, SendRoute } from '../load/http-runner.js';

export interface WorkerPoolOptions {
  workers: number;
  baseUrl: string;
  /** Connections per worker (each has its own pool). */
  connections: number;
  timeouts?: Partial<Timeouts>;
  apiKey?: string;
  replicaHeader?: string;
}

/** How long before an open-loop request's scheduled time it is handed to its worker (the worker waits for the time). */
export const WORKER_LEAD_MS = 2;

interface Lane {
  worker: Worker;
  pending: Map<number, (ex: Exchange) => void>;
  /** route.onReply of the requests in flight that asked for it. */
  replies: Map<number, () => void>;
}

export class WorkerPool implements ExchangeSender {
  readonly leadMs = WORKER_LEAD_MS;
  /** Largest sampling error of the clock offsets measured at start, µs. */
  clockResidualUs = 0;
  private readonly lanes: Lane[] = [];
  private nextId = 0;
  private nextLane = 0;
  private failure: Error | undefined;

  private constructor() {}

  static async start(opts: WorkerPoolOptions): Promise<WorkerPool> {
    const pool = new WorkerPool();
    const coordinatorClock = measureClockBase();
    try {
      await Promise.all(
        Array.from({ length: opts.workers }, async (_, index) => {
          const setup: WorkerSetup = {
            index,
            baseUrl: opts.baseUrl,
            connections: opts.connections,
            ...(opts.timeouts ? { timeouts: opts.timeouts } : {}),
            ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
            ...(opts.replicaHeader ? { replicaHeader: opts.replicaHeader } : {}),
            coordinatorClock,
          };
          const worker = startModuleWorker(import.meta.url, 'exchange-worker', setup);
          const ready = await new Promise<Extract<FromWorker, { type: 'ready' }>>((resolve, reject) => {
            worker.once('message', resolve);
            worker.once('error', reject);
          });
          pool.clockResidualUs = Math.max(pool.clockResidualUs, ready.residualNs / 1000);
          pool.attach(index, worker);
        }),
      );
    } catch (err) {
      await pool.close();
      throw new InferbenchError('E_INTERNAL', `a load worker thread failed to start: ${(err as Error).message}`);
    }
    return pool;
  }

  get size(): number {
    return this.lanes.length;
  }

  send(plan: HttpRequestPlan, dialect: Dialect, request: GenerationRequest, signal?: AbortSignal, route: SendRoute = {}): Promise<Exchange & { worker?: number }> {
    if (this.failure) return Promise.resolve(failedExchange('E_INTERNAL', `load worker failed: ${this.failure.message}`));
    if (signal?.aborted) return Promise.resolve(failedExchange('E_ABORTED', 'run stopped before the request was sent'));
    const index = route.affinity !== undefined ? route.affinity % this.lanes.length : this.nextLane++ % this.lanes.length;
    const lane = this.lanes[index] as Lane;
    const id = this.nextId++;
    const msg: ToWorker = {
      type: 'send',
      id,
      api: dialect.name,
      plan,
      request,
      keepText: route.keepText === true,
      ...(route.notBeforeMs !== undefined ? { notBeforeMs: route.notBeforeMs } : {}),
      ...(route.onReply ? { notifyReply: true } : {}),
    };
    if (route.onReply) lane.replies.set(id, route.onReply);
    return new Promise((resolve) => {
      lane.pending.set(id, (ex) => resolve({ ...ex, worker: index }));
      lane.worker.postMessage(msg);
    });
  }

  abortAll(reason?: string): void {
    for (const lane of this.lanes) lane.worker.postMessage({ type: 'abort-all', ...(reason !== undefined ? { reason } : {}) } satisfies ToWorker);
  }

  /** Each worker's event-loop health so far. */
  async stats(): Promise<WorkerStats[]> {
    return Promise.all(
      this.lanes.map(
        (lane) =>
          new Promise<WorkerStats>((resolve) => {
            const on = (msg: FromWorker): void => {
              if (msg.type !== 'stats') return;
              lane.worker.off('message', on);
              resolve(msg.stats);
            };
            lane.worker.on('message', on);
            lane.worker.postMessage({ type: 'stats' } satisfies ToWorker);
          }),
      ),
    );
  }

  async close(): Promise<void> {
    await Promise.all(
      this.lanes.map(
        (lane) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(() => void lane.worker.terminate().then(() => resolve()), 5000);
            lane.worker.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            lane.worker.postMessage({ type: 'close' } satisfies ToWorker);
          }),
      ),
    );
    this.lanes.length = 0;
  }

  private attach(index: number, worker: Worker): void {
    const lane: Lane = { worker, pending: new Map(), replies: new Map() };
    this.lanes[index] = lane;
    worker.on('message', (msg: FromWorker) => {
      if (msg.type === 'exchange') {
        const done = lane.pending.get(msg.id);
        lane.pending.delete(msg.id);
        lane.replies.delete(msg.id);
        done?.(msg.exchange);
      } else if (msg.type === 'reply') {
        lane.replies.get(msg.id)?.();
      } else if (msg.type === 'closed') {
        void worker.terminate();
      }
    });
    worker.on('error', (err) => {
      this.failure = err;
      // Requests on a dead worker end as failures with the reason: what was measured stays.
      for (const done of lane.pending.values()) done(failedExchange('E_INTERNAL', `load worker ${index} failed: ${err.message}`));
      lane.pending.clear();
      lane.replies.clear();
    });
  }
}

/** An exchange that never reached the server: sent and ended now, with its reason. */
function failedExchange(code: 'E_INTERNAL' | 'E_ABORTED', message: string): Exchange {
  const now = performance.now();
  return { sentAtMs: now, endAtMs: now, contentTimesMs: [], textParts: [], done: false, error: { code, message } };
}
