import { realClock, sleepUntil } from '../core/clock.js';
import type { ChatMessage, Dialect, GenerationRequest } from '../dialects/types.js';
import { buildRecord } from '../metrics/derive.js';
import type { RequestRecord } from '../metrics/record.js';
import type { Slo } from '../metrics/summary.js';
import type { HttpTarget } from '../transport/http.js';
import { appendReply, buildTurnMessages, isConversationWorkload } from '../workload/conversation.js';
import type { Tokenizer } from '../workload/tokenizer.js';
import type { ConversationWorkload, WorkItem } from '../workload/types.js';
import { runStageRealtime, type ExecuteRequest } from './driver.js';
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

interface Sent {
  record: RequestRecord;
  /** The generated text, kept only for conversations (the next turn resends it as history). */
  replyText: string;
}

type Send = (req: { stage: number; warmup: boolean }, item: WorkItem, id: number, scheduledAtMs: number, clientQueueMs: number) => Promise<Sent>;

/** A StageRunner that sends real HTTP requests through one dialect. */
export function createHttpStageRunner(opts: HttpRunnerOptions): StageRunner {
  const { target, dialect } = opts;
  opts.signal?.addEventListener('abort', () => target.abortAll(), { once: true });

  const send: Send = async ({ stage, warmup }, item, id, scheduledAtMs, clientQueueMs) => {
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
    const record = buildRecord(ex, {
      id,
      stage,
      warmup,
      scheduledAtMs,
      clientQueueMs,
      item,
      ...(opts.tokenizer ? { tokenizer: opts.tokenizer } : {}),
      interrupted: opts.signal?.aborted === true,
      streamed: opts.stream,
    });
    return { record, replyText: item.conversation ? ex.textParts.join('') : '' };
  };

  return {
    runStage(spec, index, firstRequestId) {
      return runStageRealtime(spec, index, firstRequestId, {
        seed: opts.seed,
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.onRecord ? { onRecord: opts.onRecord } : {}),
        ...(opts.onDispatch ? { onDispatch: opts.onDispatch } : {}),
        ...(opts.drainMs !== undefined ? { drainMs: opts.drainMs } : {}),
        ...(opts.slo ? { slo: opts.slo } : {}),
        cancelInFlight: (reason) => target.abortAll(reason),
        execute: async (req) => {
          const { workload } = spec;
          if (isConversationWorkload(workload)) return runConversation(req, workload, send);
          return (await send(req, workload.item(req.itemIndex), req.id, req.scheduledAtMs, req.clientQueueMs)).record;
        },
      });
    },
  };
}

/**
 * A conversation: each turn resends the history with the replies actually received, after its think
 * time. Every turn is its own record; the last is returned, the others emitted as they finish.
 */
async function runConversation(req: Parameters<ExecuteRequest>[0], workload: ConversationWorkload, send: Send): Promise<RequestRecord> {
  let history: ChatMessage[] = [];
  let item = workload.item(req.itemIndex);
  let sent = await send(req, { ...item, messages: buildTurnMessages(history, item) }, req.id, req.scheduledAtMs, req.clientQueueMs);
  const turns = item.conversation?.turns ?? 1;
  for (let t = 1; t < turns && sent.record.status === 'ok'; t++) {
    history = appendReply(buildTurnMessages(history, item), sent.replyText);
    req.emit(sent.record);
    item = workload.turn(req.itemIndex, t);
    const due = realClock.now() + (item.conversation?.thinkTimeMs ?? 0);
    await sleepUntil(due);
    sent = await send(req, { ...item, messages: buildTurnMessages(history, item) }, req.allocateId(), due, 0);
  }
  return sent.record;
}
