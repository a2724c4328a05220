import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../../src/core/module-worker.js';
import type { SimServerOptions } from '../../src/sim/server/index.js';

/**
 * The simulator in a worker thread of this process (test/run/sim-engines.test.ts): the run under test goes in the
 * test's thread (runInProcess) and the simulator on its own event loop, as two processes had them, without a CLI
 * start-up per run. One worker serves one simulator at a time.
 */
export interface SimThread {
  /** Starts a simulator; resolves with its URL. */
  start(options: SimServerOptions): Promise<string>;
  /** The finished (not aborted) requests' generated token counts (TruthRecord plannedMs.length), in finish order. */
  finishedTokenCounts(): Promise<number[]>;
  /** Closes the simulator (the worker stays for the next one). */
  stop(): Promise<void>;
  /** Ends the worker. */
  terminate(): Promise<void>;
}

export async function startSimThread(): Promise<SimThread> {
  const worker: Worker = startModuleWorker(import.meta.url, 'sim-engines-worker-entry', undefined);
  let failed: Error | undefined;
  worker.on('error', (err) => (failed = err));
  const reply = <T>(msg?: unknown): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (failed) return reject(failed);
      const onExit = (code: number): void => reject(failed ?? new Error(`sim worker exited (${code})`));
      worker.once('exit', onExit);
      worker.once('message', (m: T & { error?: string }) => {
        worker.off('exit', onExit);
        if (m.error !== undefined) reject(new Error(m.error));
        else resolve(m);
      });
      if (msg !== undefined) worker.postMessage(msg);
    });
  await reply<{ ready: true }>();
  return {
    start: async (options) => (await reply<{ url: string }>({ op: 'start', options })).url,
    finishedTokenCounts: async () => (await reply<{ counts: number[] }>({ op: 'truth' })).counts,
    stop: async () => void (await reply({ op: 'close' })),
    terminate: async () => void (await worker.terminate()),
  };
}
