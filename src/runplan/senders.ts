/**
 * What sends a plan's requests: this thread's connection pool, and with `workers` > 1 a pool of load worker
 * threads, each with its own connections (src/distributed/worker-pool.ts).
 */
import { WorkerPool } from '../distributed/worker-pool.js';
import { HttpTarget } from '../transport/http.js';
import { DEFAULT_POOL_CONNECTIONS } from './resolve.js';
import type { RunPlan } from './schema.js';

export interface PlanSenders {
  /** This thread's connections (the idle probes between rows use them, and the requests when there is no pool). */
  target: HttpTarget;
  pool?: WorkerPool;
  close(): Promise<void>;
}

/** The API key is the caller's: a plan never holds one. */
export async function openSenders(plan: RunPlan, baseUrl: string, apiKey: string | undefined): Promise<PlanSenders> {
  const { connections } = plan.distribution;
  const workers = plan.distribution.workers ?? 1;
  const timeouts = plan.request.timeouts;
  const auth = apiKey ? { apiKey } : {};
  const target = new HttpTarget({ baseUrl, connections, timeouts, ...auth });
  let pool: WorkerPool | undefined;
  if (workers > 1) {
    // Without --max-concurrency an open loop's only in-flight bound is the connection pool: the workers share it.
    const unbounded = plan.load.maxConcurrency === undefined && connections === DEFAULT_POOL_CONNECTIONS;
    const each = unbounded ? Math.ceil(connections / workers) : connections;
    try {
      pool = await WorkerPool.start({ workers, baseUrl, connections: each, timeouts, ...auth });
    } catch (err) {
      await target.close();
      throw err;
    }
  }
  return {
    target,
    ...(pool ? { pool } : {}),
    close: async () => {
      try {
        await pool?.close();
      } finally {
        await target.close();
      }
    },
  };
}
