/**
 * Where candidates are evaluated: lanes that each take one shape at a time. The main thread is a lane of its
 * own, and each worker thread is another, so a 2-core machine runs two searches at once. Worker lanes keep a
 * second job queued, so a worker never waits for a main thread that is busy with its own candidate.
 */
import { InferbenchError } from '../core/errors.js';
import { startModuleWorker } from '../core/module-worker.js';
import { evaluateCandidate } from './evaluate.js';
import type { CandidateShape, EvaluatedCapacity, PlanJobSettings } from './types.js';

export interface Lane {
  /** Jobs this lane accepts at once. */
  readonly depth: number;
  evaluate(shape: CandidateShape): Promise<EvaluatedCapacity>;
  close(): Promise<void>;
}

/** The main thread: evaluates in-process, yielding between candidates so worker replies are handled. */
export function mainThreadLane(job: PlanJobSettings): Lane {
  return {
    depth: 1,
    async evaluate(shape) {
      await new Promise((r) => setImmediate(r));
      return evaluateCandidate(job, shape);
    },
    close: () => Promise.resolve(),
  };
}

type Reply = { id: number; result: EvaluatedCapacity } | { id: number; error: { message: string; code?: string; hint?: string } };

/** A worker thread running src/plan/worker.ts (from source under tsx, or the built .js). */
export async function workerLane(job: PlanJobSettings): Promise<Lane> {
  const worker = startModuleWorker(import.meta.url, 'worker', job);
  const pending = new Map<number, { resolve: (r: EvaluatedCapacity) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  let failed: Error | undefined;
  const failAll = (err: Error): void => {
    failed = err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  worker.on('message', (msg: Reply) => {
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if ('result' in msg) p.resolve(msg.result);
    else p.reject(new InferbenchError(msg.error.code === 'E_CONFIG' ? 'E_CONFIG' : 'E_INTERNAL', msg.error.message, msg.error.hint ? { hint: msg.error.hint } : undefined));
  });
  worker.on('error', (err) => failAll(err));
  worker.on('exit', (code) => failAll(new Error(`plan worker exited (${code})`)));
  return {
    depth: 2,
    evaluate(shape) {
      if (failed) return Promise.reject(failed);
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, shape });
      });
    },
    async close() {
      worker.removeAllListeners('exit');
      await worker.terminate();
    },
  };
}

/**
 * `threads` lanes: the main thread at once, plus threads − 1 workers as each finishes starting (a worker takes a few
 * hundred ms to load, time the main thread spends searching).
 */
export function openLanes(job: PlanJobSettings, threads: number): Array<Promise<Lane>> {
  return [Promise.resolve(mainThreadLane(job)), ...Array.from({ length: Math.max(0, threads - 1) }, () => workerLane(job))];
}
