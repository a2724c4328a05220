import { performance } from 'node:perf_hooks';

/** A monotonic millisecond clock. Real runs use performance.now(); simulations use a virtual clock. */
export interface Clock {
  now(): number;
}

export const realClock: Clock = { now: () => performance.now() };

/** Coarse setTimeout then a short precise wait: setTimeout alone is ±1–4 ms late under load. */
export function sleepUntil(deadlineMs: number, signal?: AbortSignal, spinMs = 1.5): Promise<void> {
  return new Promise((resolve) => {
    const onAbort = (): void => resolve();
    if (signal?.aborted) return resolve();
    signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (): void => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    };
    const spin = (): void => {
      if (signal?.aborted) return finish();
      if (performance.now() >= deadlineMs) return finish();
      setImmediate(spin);
    };
    const coarse = deadlineMs - performance.now() - spinMs;
    if (coarse > 0) setTimeout(spin, coarse);
    else spin();
  });
}
