import { closeSimWorker } from '../../src/cli/embedded-sim.js';
import { startModuleWorker } from '../../src/core/module-worker.js';
import type { SimServerOptions } from '../../src/sim/server/index.js';

/**
 * `inferbench sim` with any SimServerOptions (model time scale, seed, …) on its own thread: the worker entry the
 * default `run` serves its embedded simulator from (src/cli/sim-worker.ts), so the simulator's steps and the client
 * of a run in this process (helpers/cli-in-process-capgate.ts) do not wait on one event loop — which would add the
 * client's work to every model step and blur the differences between simulators of different speeds — without a
 * child process to start.
 */
export async function startSimWorker(options: SimServerOptions): Promise<{ url: string; close(): Promise<void> }> {
  const worker = startModuleWorker(import.meta.url, '../../src/cli/sim-worker', { host: '127.0.0.1', port: 0, ...options });
  const ready = await new Promise<{ url: string }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the simulator worker exited (${code}) before serving`)));
  });
  worker.removeAllListeners('exit');
  return {
    url: ready.url,
    close: () => closeSimWorker(worker),
  };
}
