import type { Dialect, GenerationRequest } from '../dialects/types.js';
import { buildRecord } from '../metrics/derive.js';
import type { RequestRecord } from '../metrics/record.js';
import type { Slo } from '../metrics/summary.js';
import type { HttpTarget } from '../transport/http.js';
import type { Tokenizer } from '../workload/tokenizer.js';
import { runStageRealtime } from './driver.js';
import type { StageRunner } from './types.js';

export interface HttpRunnerOptions {
  target: HttpTarget;
  dialect: Dialect;
  model: string;
  forceLength: boolean;
  stream: boolean;
  extraBody?: Record<string, unknown>;
  tokenizer?: Tokenizer;
  seed: number;
  signal?: AbortSignal;
  onRecord?: (record: RequestRecord) => void;
  onDispatch?: () => void;
  /** Grace for in-flight requests after a stage's maxSeconds, before they are cancelled. */
  drainMs?: number;
  slo?: Slo;
}

/** A StageRunner that sends real HTTP requests through one dialect. */
export function createHttpStageRunner(opts: HttpRunnerOptions): StageRunner {
  const { target, dialect } = opts;
  opts.signal?.addEventListener('abort', () => target.abortAll(), { once: true });
  return {
    runStage(spec, index, firstRequestId) {
      return runStageRealtime(spec, index, firstRequestId, {
        seed: opts.seed,
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.onRecord ? { onRecord: opts.onRecord } : {}),
        ...(opts.onDispatch ? { onDispatch: opts.onDispatch } : {}),
        ...(opts.drainMs !== undefined ? { drainMs: opts.drainMs } : {}),
        ...(opts.slo ? { slo: opts.slo } : {}),
        cancelInFlight: () => target.abortAll(),
        execute: async ({ id, stage, itemIndex, scheduledAtMs, clientQueueMs, warmup }) => {
          const item = spec.workload.item(itemIndex);
          const request: GenerationRequest = {
            model: opts.model,
            prompt: item.prompt,
            ...(item.messages ? { messages: item.messages } : {}),
            maxTokens: item.outputTokens,
            forceLength: opts.forceLength,
            stream: opts.stream,
            ...(opts.extraBody ? { extraBody: opts.extraBody } : {}),
          };
          const ex = await target.send(dialect.buildRequest(request), dialect, request, opts.signal);
          return buildRecord(ex, {
            id,
            stage,
            warmup,
            scheduledAtMs,
            clientQueueMs,
            item,
            ...(opts.tokenizer ? { tokenizer: opts.tokenizer } : {}),
            interrupted: opts.signal?.aborted === true,
          });
        },
      });
    },
  };
}
