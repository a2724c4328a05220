/**
 * What a bench sends through: one HttpTarget in this thread (workers = 1, as `run` without --workers), or a
 * WorkerPool of N load threads (as `run --workers N`). Both stamp on this thread's performance.now() clock:
 * the pool moves each worker's stamps onto it, so a clock join made from this thread (_sim-child.ts) holds.
 */
import type { ExchangeSender } from '../src/load/http-runner.js';
import { WorkerPool } from '../src/distributed/worker-pool.js';
import type { WorkerStats } from '../src/distributed/protocol.js';
import type { Timeouts } from '../src/transport/exchange.js';
import { HttpTarget } from '../src/transport/http.js';

export interface BenchSender {
  workers: number;
  target: ExchangeSender;
  /** Bound on the workers' clock offsets to this thread, µs (0 with one thread: no conversion). */
  clockResidualUs: number;
  /** Each worker's event-loop figures since it started ([] with one thread). */
  workerStats(): Promise<WorkerStats[]>;
  close(): Promise<void>;
}

/** `connections` is per sender: each worker gets that many, as `run --workers` does. */
export async function openSender(workers: number, baseUrl: string, connections: number, timeouts?: Partial<Timeouts>): Promise<BenchSender> {
  const t = timeouts ? { timeouts } : {};
  if (workers <= 1) {
    const target = new HttpTarget({ baseUrl, connections, ...t });
    return { workers: 1, target, clockResidualUs: 0, workerStats: async () => [], close: () => target.close() };
  }
  const pool = await WorkerPool.start({ workers, baseUrl, connections, ...t });
  return { workers, target: pool, clockResidualUs: pool.clockResidualUs, workerStats: () => pool.stats(), close: () => pool.close() };
}
