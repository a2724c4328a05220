import { realClock, sleepUntil } from '../core/clock.js';
import type { ChatMessage, Dialect, GenerationRequest, HttpRequestPlan } from '../dialects/types.js';
import { buildRecord } from '../metrics/derive.js';
import type { RequestRecord } from '../metrics/record.js';
import type { Slo } from '../metrics/summary.js';
import type { Exchange } from '../transport/exchange.js';
import { appendReply, buildTurnMessages, isConversationWorkload } from '../workload/conversation.js';
import type { Tokenizer } from '../workload/tokenizer.js';
import type { ConversationWorkload, WorkItem } from '../workload/types.js';
import { runStageRealtime, type ExecuteRequest } from './driver.js';
import type { ReasoningFormat } from '../metrics/reasoning.js';
import type { ShardSpec } from './shard.js';
import type { StageRunner } from './types.js';

/** Where a request goes and when: a conversation's turns stay on one worker; open loops hand requests over early. */
export interface SendRoute {
  /** Requests with the same affinity go to the same worker. */
  affinity?: number;
  /** Do not send before this instant (the run's clock). */
  notBeforeMs?: number;
  /** The reply's text is needed (a conversation resends it) even when the server counted its tokens. */
  keepText?: boolean;
  /** Reply bytes arrived (the head, then at most every REPLY_NOTE_MS of body): the row's stall watch (load/stall.ts). */
  onReply?: () => void;
}

/**
 * What sends requests: one HttpTarget in this thread, or a pool of load worker threads (src/distributed/) that
 * each own one. `worker` says which worker sent it.
 */
export interface ExchangeSender {
  send(plan: HttpRequestPlan, dialect: Dialect, request: GenerationRequest, signal?: AbortSignal, route?: SendRoute): Promise<Exchange & { worker?: number; replica?: number }>;
  abortAll(reason?: string): void;
  /** ms before its scheduled time an open-loop request may be handed over (the sender waits for the time itself). */
  readonly leadMs?: number;
}

export interface HttpRunnerOptions {
  target: ExchangeSender;
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
  /** `run --shard I/N`: send only this shard's part of each row. */
  shard?: ShardSpec;
  /** How reasoning is told from the answer (metrics/reasoning.ts). */
  reasoningFormat?: ReasoningFormat;
  /** Conversations: this header names the conversation on every turn (`--session-header`, for a router's affinity). */
  sessionHeader?: string;
}

interface Sent {
  record: RequestRecord;
  /** The generated text, kept only for conversations (the next turn resends it as history). */
  replyText: string;
}

type Send = (
  req: { stage: number; warmup: boolean; itemIndex: number; onReply?: () => void },
  item: WorkItem,
  id: number,
  scheduledAtMs: number,
  clientQueueMs: number,
) => Promise<Sent>;

/** A StageRunner that sends real HTTP requests through one dialect. */
export function createHttpStageRunner(opts: HttpRunnerOptions): StageRunner {
  const { target, dialect } = opts;
  opts.signal?.addEventListener('abort', () => target.abortAll(), { once: true });

  const lead = target.leadMs ?? 0;
  const replicaNumbers = new Map<string, number>();
  const send: Send = async ({ stage, warmup, itemIndex, onReply }, item, id, scheduledAtMs, clientQueueMs) => {
    const request: GenerationRequest = {
      model: opts.model,
      prompt: item.prompt,
      ...(item.messages ? { messages: item.messages } : {}),
      ...(item.images ? { images: item.images } : {}),
      maxTokens: item.outputTokens,
      forceLength: opts.forceLength,
      stream: opts.stream,
      ...(opts.extraBody ? { extraBody: opts.extraBody } : {}),
      ...(item.inputs ? { inputs: item.inputs } : {}),
    };
    // The text is needed back from a worker when a conversation resends it, or to find inline <think> tags.
    const route: SendRoute = { affinity: itemIndex, keepText: item.conversation !== undefined || opts.reasoningFormat === 'think-tags', ...(onReply ? { onReply } : {}) };
    // Handed over early (a worker pool): the worker itself waits for the scheduled time.
    if (lead > 0) route.notBeforeMs = scheduledAtMs;
    const built = dialect.buildRequest(request);
    // A router keeps a conversation on one replica by this header: the same value on every turn.
    const plan = opts.sessionHeader && item.conversation ? { ...built, headers: { ...built.headers, [opts.sessionHeader]: `${opts.seed}-${item.conversation.id}` } } : built;
    // The body carries the images already: a worker thread needs the request only to read the reply, not a copy of them.
    const { images: _images, ...forReply } = request;
    const ex = await target.send(plan, dialect, forReply, opts.signal, route);
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
      ...(opts.reasoningFormat ? { reasoningFormat: opts.reasoningFormat } : {}),
    });
    if (ex.worker !== undefined) record.worker = ex.worker;
    if (ex.replica !== undefined) record.replica = ex.replica;
    else if (ex.replicaTag !== undefined) replicaFromHeader(record, ex.replicaTag, replicaNumbers);
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
        ...(lead > 0 ? { leadMs: lead } : {}),
        ...(opts.shard ? { shard: opts.shard } : {}),
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
 * `--replica-header`: the replica a router says served the request. A whole number is the replica's index; any other
 * text is numbered by its first appearance in this run (and kept as the record's replicaName).
 */
function replicaFromHeader(record: RequestRecord, tag: string, replicaNumbers: Map<string, number>): void {
  if (/^\d{1,6}$/.test(tag)) {
    record.replica = Number(tag);
    return;
  }
  let n = replicaNumbers.get(tag);
  if (n === undefined) {
    n = replicaNumbers.size;
    replicaNumbers.set(tag, n);
  }
  record.replica = n;
  record.replicaName = tag;
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
