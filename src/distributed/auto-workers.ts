import { availableParallelism } from 'node:os';
import { DEFAULT_THROUGHPUT_CONCURRENCY } from '../load/profiles.js';
import type { Workload } from '../workload/types.js';

/**
 * Client CPU one worker spends. Per streamed token: what `inferbench run` itself costs as users run it, measured
 * through the built CLI (`npx tsx bench/_run-pair.ts`, the `--only=run` rows of `npm run bench:overhead`: a paced
 * server sending one token per packet every 10 ms to 128 streams, 64-token replies, CPU of the whole client process
 * from runs of 640 and 1,920 requests so start-up cancels) on the project's 2-core VM at a load average of 1.5
 * (2026-11-28): 17.8 µs user + 12.4 µs kernel = 30.2 µs per token, less the per-request share below spread over
 * its 64 tokens (63 / 64 ≈ 1 µs). Most of it is what any Node client pays for one wake-up and one read per packet
 * there (a process that only reads the same sockets: 9.3 + 12.0 µs). An earlier 5.0 came from the library's
 * inner loop on another day's VM (3.00 + 1.99 µs), which undercounted a real run about sixfold.
 * Per request, the ingest rows' cost per token against tokens per request (2.76 µs at 256 tokens, 4.48 µs at 32:
 * about 63 µs a request for the connection, the request, the record and its line of requests.jsonl).
 */
export const CPU_US_PER_TOKEN = 29;
export const CPU_US_PER_REQUEST = 63;
/** A worker is planned at this share of a core, so its event loop stays responsive enough to stamp tokens on time. */
export const WORKER_CPU_BUDGET = 0.5;
/** Tokens a stream delivers per second at most on fast servers (10 ms between tokens): bounds closed loops' load. */
const STREAM_TOKENS_PER_S = 100;

export interface WorkerChoice {
  workers: number;
  /** One line for the terminal: what was estimated and why this many. */
  reason: string;
}

/** The load-shaping options chooseWorkers reads (a subset of config's RunOptions, declared here below config/). */
export interface WorkerLoadOptions {
  profile: string;
  concurrencies?: readonly number[];
  maxConcurrency?: number;
  numPrompts: number;
  rates?: readonly number[];
}

/** `--workers auto`: one worker unless the load the flags ask for needs more, at most cores − 1. */
export function chooseWorkers(opts: WorkerLoadOptions, workload: Workload, cores = availableParallelism()): WorkerChoice {
  let outSum = 0;
  for (let i = 0; i < 50; i++) outSum += workload.item(i).outputTokens;
  const meanOut = outSum / 50;
  const streams = Math.max(...(opts.concurrencies ?? [0]), opts.maxConcurrency ?? 0, opts.profile === 'grid' ? opts.numPrompts : 0);
  const rate = Math.max(0, ...(opts.rates ?? []).filter(Number.isFinite));
  const adaptive = opts.profile === 'throughput' || opts.profile === 'sweep' || opts.profile === 'capacity';
  const streamCap = streams > 0 ? streams : adaptive ? DEFAULT_THROUGHPUT_CONCURRENCY : 1;
  // Tokens per second: an open loop's rate × output length, bounded by what its streams can carry.
  const tokensPerS = rate > 0 ? rate * meanOut : streamCap * STREAM_TOKENS_PER_S;
  const requestsPerS = rate > 0 ? rate : tokensPerS / Math.max(1, meanOut);
  const cpu = (tokensPerS * CPU_US_PER_TOKEN + requestsPerS * CPU_US_PER_REQUEST) / 1e6;
  const most = Math.max(1, cores - 1);
  const wanted = Math.max(1, Math.ceil(cpu / WORKER_CPU_BUDGET));
  const workers = Math.min(wanted, most);
  const load = rate > 0 ? `${rate} req/s × ${Math.round(meanOut)} tokens` : `${streamCap} streams × up to ${STREAM_TOKENS_PER_S} tokens/s`;
  const capped = wanted > most ? `; ${wanted} wanted, at most cores − 1 = ${most}` : '';
  return {
    workers,
    reason: `workers: auto → ${workers} (${load} ≈ ${(cpu * 100).toFixed(0)}% of a core at ${CPU_US_PER_TOKEN} µs/token; one worker per ${WORKER_CPU_BUDGET * 100}%${capped})`,
  };
}
