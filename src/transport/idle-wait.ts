import { realClock, sleepUntil } from '../core/clock.js';
import type { ServerSample } from './prometheus.js';

/** How a row's start waited for the server to finish earlier work (StageSummary.idleWait). */
export interface IdleWaitOutcome {
  waitedS: number;
  idle: boolean;
  method: string;
}

export interface IdleWaitOptions {
  /** A fresh reading of the server's gauges, or undefined when it has none. */
  readGauges?: () => Promise<ServerSample | undefined>;
  /**
   * Whose /metrics readGauges reads, for the messages: "server" (default), or "replicas" (several --target URLs:
   * running and waiting added up over every replica, so 0 means each of them is idle).
   */
  gaugesOf?: 'server' | 'replicas';
  /**
   * Without gauges: one probe request (a fresh prompt, one output token) and its time to the first token, or
   * undefined when it failed. Used only when the last row left requests the server may still be running.
   */
  probe?: () => Promise<number | undefined>;
  /** The probe's TTFT at idle (the synchronous row's median TTFT). */
  idleTtftMs?: number;
  /** What the probe times, for the messages (default TTFT; embeddings: latency). */
  probeLabel?: string;
  /** Whether the previous row cancelled requests still in flight (a server may keep running abandoned requests). */
  leftRequests: boolean;
  /** How many requests the previous row cut (measured or not), and its label: said in what the wait was for. */
  cutRequests?: number;
  previousLabel?: string;
  boundMs: number;
  signal?: AbortSignal;
}

/**
 * Waits, within a bound, until the server has nothing of the previous row left to do, so that no row starts on
 * a backlog. With Prometheus gauges (vLLM, SGLang, TGI, llama.cpp, TensorRT-LLM): until running + waiting read 0
 * (twice in a row, 200 ms apart, when the last row cut requests). Without: when the previous row cancelled requests, until a one-token probe's TTFT is back
 * within 1.5× (+ 20 ms) of the synchronous level; when it cancelled nothing, every request has been answered
 * and there is nothing to wait for.
 */
export async function waitForIdleServer(o: IdleWaitOptions): Promise<IdleWaitOutcome> {
  const start = realClock.now();
  const waited = (): number => (realClock.now() - start) / 1000;
  const deadline = start + o.boundMs;
  // After a row that cut requests, the method says so: the next row waited for what it left, not for nothing.
  const after =
    o.leftRequests && o.cutRequests !== undefined && o.cutRequests > 0
      ? `after ${o.previousLabel ?? 'the previous row'} cut ${o.cutRequests} request${o.cutRequests === 1 ? '' : 's'}: `
      : o.leftRequests
        ? `after ${o.previousLabel ?? 'the previous row'} stopped early: `
        : '';
  if (o.readGauges) {
    const source = o.gaugesOf === 'replicas' ? "every replica's /metrics" : "the server's /metrics";
    const short = o.gaugesOf === 'replicas' ? "replicas' /metrics, added up" : 'server /metrics';
    let zeros = 0;
    for (;;) {
      const g = await o.readGauges();
      if (!g || (g.running === undefined && g.waiting === undefined)) break;
      zeros = (g.running ?? 0) + (g.waiting ?? 0) === 0 ? zeros + 1 : 0;
      // Every request of the last row was answered: one idle reading will do. After cut requests, two in a row.
      if (zeros >= (o.leftRequests ? 2 : 1)) {
        const method = o.leftRequests ? `${after}until ${source} read running + waiting = 0 twice, 200 ms apart` : `${short}: running + waiting = 0`;
        return { waitedS: waited(), idle: true, method };
      }
      if (realClock.now() >= deadline || o.signal?.aborted) {
        return { waitedS: waited(), idle: false, method: `${after}${short}: ${g.running ?? 0} running, ${g.waiting ?? 0} waiting` };
      }
      await sleepUntil(realClock.now() + 200, o.signal);
    }
  }
  if (!o.leftRequests) return { waitedS: waited(), idle: true, method: 'every request of the previous row had been answered' };
  if (!o.probe || o.idleTtftMs === undefined) {
    return { waitedS: waited(), idle: false, method: `${after}the server has no /metrics to tell when it is done` };
  }
  const limit = 1.5 * o.idleTtftMs + 20;
  let last: number | undefined;
  for (;;) {
    // A server that stopped answering must not hold the run past the bound (a request's own timeout is minutes).
    let timer: NodeJS.Timeout | undefined;
    const giveUp = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - realClock.now()))));
    last = await Promise.race([o.probe(), giveUp]);
    clearTimeout(timer);
    if (last !== undefined && last <= limit) {
      return { waitedS: waited(), idle: true, method: `${after}until a one-token probe's ${o.probeLabel ?? 'TTFT'} was back to the synchronous level (probe ${o.probeLabel ?? 'TTFT'} ${last.toFixed(0)} ms, within 1.5× the synchronous ${o.idleTtftMs.toFixed(0)} ms)` };
    }
    if (realClock.now() >= deadline || o.signal?.aborted) break;
    await sleepUntil(realClock.now() + 500, o.signal);
  }
  return { waitedS: waited(), idle: false, method: `${after}probe ${o.probeLabel ?? 'TTFT'} ${last === undefined ? 'failed' : `${last.toFixed(0)} ms`}, over 1.5× the synchronous ${o.idleTtftMs.toFixed(0)} ms` };
}
