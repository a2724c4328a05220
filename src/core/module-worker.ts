import { Worker } from 'node:worker_threads';

/**
 * A worker thread running the module `name` that sits beside `from` (the caller's import.meta.url): from source under
 * tsx (tests, dev) the worker registers tsx itself before loading the .ts entry; built, it loads the .js beside it.
 */
export function startModuleWorker(from: string, name: string, workerData: unknown): Worker {
  if (from.endsWith('.ts')) {
    const entry = new URL(`./${name}.ts`, from).href;
    return new Worker(
      `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`,
      { eval: true, workerData },
    );
  }
  return new Worker(new URL(`./${name}.js`, from), { workerData });
}
