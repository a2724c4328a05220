/**
 * What sends a plan's requests: this thread's connection pool, and with `workers` > 1 a pool of load worker
 * threads, each with its own connections (src/distributed/worker-pool.ts). Several replicas (`--target URL,URL`):
 * one of those per replica, behind the plan's balance policy (load/replica-sender.ts).
 */
import { WorkerPool } from '../distributed/worker-pool.js';
import type { ExchangeSender } from '../load/http-runner.js';
import { ReplicaSender } from '../load/replica-sender.js';
import { HttpTarget } from '../transport/http.js';
import { DEFAULT_POOL_CONNECTIONS } from './resolve.js';
import type { RunPlan } from './schema.js';

export interface PlanSenders {
  /** This thread's connections (the idle probes between rows use them, and the requests when there is no pool). */
  target: HttpTarget;
  pool?: WorkerPool;
  /** Several replicas: the balancing sender (requests go through it, not through `target` or `pool`). */
  replicas?: ReplicaSender;
  /** Where the requests go: the replicas' balancer, else the pool, else `target`. */
  sender: ExchangeSender;
  close(): Promise<void>;
}

/** The API key is the caller's: a plan never holds one. */
export async function openSenders(plan: RunPlan, baseUrl: string, apiKey: string | undefined): Promise<PlanSenders> {
  const urls = plan.target.replicas;
  if (urls && urls.length > 1) return openReplicaSenders(plan, urls, apiKey);
  const { connections } = plan.distribution;
  const workers = plan.distribution.workers ?? 1;
  const timeouts = plan.request.timeouts;
  const auth = apiKey ? { apiKey } : {};
  const replicaHeader = plan.request.replicaHeader ? { replicaHeader: plan.request.replicaHeader } : {};
  const target = new HttpTarget({ baseUrl, connections, timeouts, ...auth, ...replicaHeader });
  let pool: WorkerPool | undefined;
  if (workers > 1) {
    // Without --max-concurrency an open loop's only in-flight bound is the connection pool: the workers share it.
    const unbounded = plan.load.maxConcurrency === undefined && connections === DEFAULT_POOL_CONNECTIONS;
    const each = unbounded ? Math.ceil(connections / workers) : connections;
    try {
      pool = await WorkerPool.start({ workers, baseUrl, connections: each, timeouts, ...auth, ...replicaHeader });
    } catch (err) {
      await target.close();
      throw err;
    }
  }
  return {
    target,
    ...(pool ? { pool } : {}),
    sender: pool ?? target,
    close: async () => {
      try {
        await pool?.close();
      } finally {
        await target.close();
      }
    },
  };
}

/**
 * One sender per replica, each with the plan's connections (any replica may get every request in flight, as a
 * session policy can send them); with workers > 1 each replica gets its share of the load threads.
 */
async function openReplicaSenders(plan: RunPlan, urls: readonly string[], apiKey: string | undefined): Promise<PlanSenders> {
  const { connections } = plan.distribution;
  const workers = plan.distribution.workers ?? 1;
  const timeouts = plan.request.timeouts;
  const auth = apiKey ? { apiKey } : {};
  const targets = urls.map((baseUrl) => new HttpTarget({ baseUrl, connections, timeouts, ...auth }));
  const pools: WorkerPool[] = [];
  const closeAll = async (): Promise<void> => {
    try {
      await Promise.all(pools.map((p) => p.close()));
    } finally {
      await Promise.all(targets.map((t) => t.close()));
    }
  };
  if (workers > 1) {
    const each = Math.max(1, Math.ceil(workers / urls.length));
    try {
      for (const baseUrl of urls) pools.push(await WorkerPool.start({ workers: each, baseUrl, connections: Math.ceil(connections / each), timeouts, ...auth }));
    } catch (err) {
      await closeAll();
      throw err;
    }
  }
  const replicas = new ReplicaSender(pools.length > 0 ? pools : targets, plan.target.balance ?? 'round-robin');
  return { target: targets[0] as HttpTarget, replicas, sender: replicas, close: closeAll };
}
