import type { Exchange } from '../transport/exchange.js';
import type { Tokenizer } from '../workload/tokenizer.js';
import type { WorkItem } from '../workload/types.js';
import type { RequestRecord } from './record.js';
import { reasoningOf, type ReasoningFormat } from './reasoning.js';

export interface RecordContext {
  id: number;
  stage: number;
  warmup: boolean;
  scheduledAtMs: number;
  /** Time spent waiting for a client concurrency slot. */
  clientQueueMs: number;
  item: WorkItem;
  /** Used only when the server reports no output count. */
  tokenizer?: Tokenizer;
  /** The run was stopped while this request was in flight. */
  interrupted?: boolean;
  /**
   * False for a non-streamed reply (--no-stream): the whole text arrives at once, so neither the time to
   * the first token nor the gaps between tokens were observed. Absent = streamed.
   */
  streamed?: boolean;
  /** How reasoning is told from the answer (metrics/reasoning.ts); default: the engine's own fields. */
  reasoningFormat?: ReasoningFormat;
}

/** Turn one observed exchange into a record with every derived per-request metric (design.md §2). */
export function buildRecord(ex: Exchange, ctx: RecordContext): RequestRecord {
  const { item } = ctx;
  // Embeddings: the reply is vectors, whole in one body: no tokens generated, none to time.
  const embeddings = item.inputs !== undefined;
  const streamed = ctx.streamed !== false && !embeddings;
  const times = ex.contentTimesMs;
  const firstTokenAtMs = times[0];
  const lastTokenAtMs = times[times.length - 1];

  let outputTokens: number;
  let tokenCountSource: RequestRecord['tokenCountSource'];
  if (embeddings) {
    outputTokens = 0;
    // Nothing generated: the source says where the request's one count, its prompt tokens, came from.
    tokenCountSource = ex.usage?.promptTokens !== undefined ? ex.usage.source : item.promptTokenSource;
  } else if (ex.usage?.outputTokens !== undefined) {
    outputTokens = ex.usage.outputTokens;
    tokenCountSource = ex.usage.source;
  } else if (ex.frameTokens !== undefined) {
    outputTokens = ex.frameTokens;
    tokenCountSource = 'server-details';
  } else if (ctx.tokenizer && ex.textParts.length > 0) {
    outputTokens = ctx.tokenizer.encode(ex.textParts.join('')).length;
    tokenCountSource = 'client-tokenizer';
  } else {
    outputTokens = times.length;
    tokenCountSource = 'chunk-count';
  }
  const serverPrompt = ex.usage?.promptTokens;
  const promptTokens = serverPrompt ?? item.promptTokens;

  const chunkGapsMs: number[] = new Array(streamed ? Math.max(0, times.length - 1) : 0);
  if (streamed) for (let i = 1; i < times.length; i++) chunkGapsMs[i - 1] = (times[i] as number) - (times[i - 1] as number);

  let status: RequestRecord['status'] = 'ok';
  let error = ex.error;
  if (error?.code === 'E_ABORTED' || (ctx.interrupted && error)) status = 'incomplete';
  else if (error) status = 'error';
  else if (!embeddings && (firstTokenAtMs === undefined || outputTokens === 0)) {
    status = 'error';
    error = { code: 'E_EMPTY', message: 'the server replied without generating any token' };
  }

  const record: RequestRecord = {
    id: ctx.id,
    stage: ctx.stage,
    warmup: ctx.warmup,
    status,
    scheduledAtMs: ctx.scheduledAtMs,
    sentAtMs: ex.sentAtMs,
    dispatchLagMs: ex.sentAtMs - ctx.scheduledAtMs,
    clientQueueMs: ctx.clientQueueMs,
    endAtMs: ex.endAtMs,
    chunkGapsMs,
    chunks: times.length,
    requestedPromptTokens: item.promptTokens,
    requestedOutputTokens: item.outputTokens,
    promptTokens,
    outputTokens,
    tokenCountSource,
    promptTokenSource: serverPrompt !== undefined ? (ex.usage?.source ?? 'server-usage') : item.promptTokenSource,
    clientPromptTokens: item.promptTokens,
  };
  if (ex.headersAtMs !== undefined) record.headersAtMs = ex.headersAtMs;
  if (ex.usage?.cachedTokens !== undefined) record.cachedTokens = ex.usage.cachedTokens;
  if (item.images && item.images.length > 0) {
    record.images = item.images.length;
    // Image tokens are what the server counted beyond the client's text (a later turn's history is not in the client count).
    if (serverPrompt !== undefined && item.conversation === undefined) record.imageTokens = Math.max(0, serverPrompt - item.promptTokens);
  }
  if (item.inputs) record.inputCount = item.inputs.length;
  if (ex.usage?.specVerifySteps !== undefined) record.specVerifySteps = ex.usage.specVerifySteps;
  if (item.conversation) {
    record.turn = item.conversation.turn;
    record.conversationId = item.conversation.id;
  }
  if (ex.finishReason !== undefined) record.finishReason = ex.finishReason;
  if (ex.serverRequestId !== undefined) record.serverRequestId = ex.serverRequestId;
  if (ex.retries) record.retries = ex.retries;
  if (ex.dispatchedAtMs !== undefined) record.connectWaitMs = Math.max(0, ex.sentAtMs - ex.dispatchedAtMs);
  if (error) record.error = error;
  if (firstTokenAtMs !== undefined && lastTokenAtMs !== undefined) {
    record.firstTokenAtMs = firstTokenAtMs;
    record.lastTokenAtMs = lastTokenAtMs;
    // A non-streamed body arrives whole: its arrival is the end of the request, not a first token.
    if (streamed) record.ttftMs = firstTokenAtMs - ex.sentAtMs;
  }
  if (status === 'ok') {
    const e2e = ex.endAtMs - ex.sentAtMs;
    record.e2eMs = e2e;
    record.queuedE2eMs = ex.endAtMs - ctx.scheduledAtMs;
    // ITL needs two tokens seen apart: one token, a non-streamed body or a stream that delivered every
    // token in one chunk has no gap to measure (undefined, never a made-up 0 or NaN).
    if (streamed && outputTokens > 1 && times.length > 1 && firstTokenAtMs !== undefined && lastTokenAtMs !== undefined) {
      record.itlMs = (lastTokenAtMs - firstTokenAtMs) / (outputTokens - 1);
    }
    if (promptTokens + outputTokens > 0) record.latencyPerTokenMs = e2e / (promptTokens + outputTokens);
    if (outputTokens > 0) record.latencyPerOutputTokenMs = e2e / outputTokens;
    const reasoning = embeddings ? undefined : reasoningOf(ex, ctx.reasoningFormat ?? 'fields', ctx.tokenizer);
    if (reasoning) {
      record.reasoningTokens = reasoning.reasoningTokens;
      record.reasoningTokenSource = reasoning.reasoningTokenSource;
      const answerAt = reasoning.firstAnswerAtMs;
      if (streamed && answerAt !== undefined) {
        // Time to first output token of the answer (TTFO), and the answer's own inter-token latency.
        record.ttfoMs = answerAt - ex.sentAtMs;
        const answerTokens = outputTokens - reasoning.reasoningTokens;
        if (answerTokens > 1 && lastTokenAtMs !== undefined && lastTokenAtMs > answerAt) record.answerItlMs = (lastTokenAtMs - answerAt) / (answerTokens - 1);
      }
    }
  }
  return record;
}

/**
 * A request is good when every SLO criterion that was measured for it holds. An unmeasured value (no ITL
 * for a one-token reply, no TTFT for a non-streamed one) neither passes nor fails its criterion; a request
 * with no measured criterion at all cannot be called good.
 */
export function meetsRequestSlo(r: Pick<RequestRecord, 'ttftMs' | 'itlMs' | 'e2eMs'>, slo: { ttftMs?: number; itlMs?: number; e2eMs?: number }): boolean {
  let measured = 0;
  for (const [limit, value] of [[slo.ttftMs, r.ttftMs], [slo.itlMs, r.itlMs], [slo.e2eMs, r.e2eMs]] as const) {
    if (limit === undefined || value === undefined || !Number.isFinite(value)) continue;
    if (value > limit) return false;
    measured++;
  }
  return measured > 0;
}
