import { Worker } from 'node:worker_threads';
import type { RunOptions } from '../config/run-options.js';
import { InferbenchError, configError } from '../core/errors.js';
import { resolveSimEngine } from '../sim/create.js';
import { DEFAULT_SIM } from './defaults.js';
import { checkSimLimits } from './sim-limits.js';

/** The simulated engine started in-process (in a worker thread) when `inferbench run` has no --target. */
export interface EmbeddedSim {
  url: string;
  model: string;
  gpu: string;
  gpus: number;
  quant?: string;
  /** The KV-cache element type the simulator models (auto | fp8 | int8). */
  kvCacheDtype?: string;
  description: string;
  /** Lines to print before the run (a context longer than the KV cache holds). */
  warnings: string[];
  close(): Promise<void>;
}

/** `signal`: the run's Ctrl-C while the simulator starts ends its worker there (the start then rejects). */
export async function startDefaultSim(opts: RunOptions, signal?: AbortSignal): Promise<EmbeddedSim> {
  const engine = opts.engine ?? DEFAULT_SIM.engine;
  const model = opts.model ?? DEFAULT_SIM.model;
  const gpu = opts.gpu ?? DEFAULT_SIM.gpu;
  const gpus = opts.gpus ?? DEFAULT_SIM.gpus;
  // Validate here, so a bad --model or --gpu, or lengths the engine refuses, are one line on the main thread, not a worker crash.
  const configured = { ...(opts.quant ? { quant: opts.quant } : {}), ...(opts.kvCacheDtype ? { kvCacheDtype: opts.kvCacheDtype } : {}) };
  const resolved = resolveSimEngine({ engine, model, gpu, gpus, ...configured });
  const warnings = checkSimLimits(opts, resolved);
  const quant = resolved.description.quant;
  const workerData = { engine, model, gpu, gpus, ...configured, host: '127.0.0.1', port: 0, seed: opts.seed };
  const worker = import.meta.url.endsWith('.ts')
    ? // Running from source (tests, dev): the worker registers tsx itself before loading the TS entry.
      new Worker(
        `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(new URL('./sim-worker.ts', import.meta.url).href)}); })`,
        { eval: true, workerData },
      )
    : new Worker(new URL('./sim-worker.js', import.meta.url), { workerData });
  // Only while it starts: a Ctrl-C during the run stops the rows first, and the simulator after them.
  const stopStarting = (): void => void worker.terminate();
  const ready = await new Promise<{ url: string; description: string }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', (err) => reject(err instanceof InferbenchError ? err : configError(`the built-in simulator failed to start: ${err.message}`)));
    worker.once('exit', (code) => reject(configError(`the built-in simulator exited (${code}) before serving`)));
    if (signal?.aborted) void worker.terminate();
    signal?.addEventListener('abort', stopStarting, { once: true });
  }).finally(() => signal?.removeEventListener('abort', stopStarting));
  worker.removeAllListeners('exit');
  return {
    url: ready.url,
    model,
    gpu,
    gpus,
    quant,
    kvCacheDtype: resolved.description.kvCacheDtype,
    description: ready.description,
    warnings,
    close: () => closeSimWorker(worker),
  };
}

/** Stops a simulator worker (src/cli/sim-worker.ts): it closes its server and exits; terminated if it has not in 2 s. */
export async function closeSimWorker(worker: Worker): Promise<void> {
  const exited = new Promise<void>((r) => worker.once('exit', () => r()));
  worker.postMessage('close');
  const timer = setTimeout(() => void worker.terminate(), 2000);
  await exited;
  clearTimeout(timer);
}
