import { configError } from '../core/errors.js';
import type { ChatMessage } from '../dialects/types.js';
import { conversationWorkload } from './conversation.js';
import { datasetWorkload, type DatasetSpec } from './dataset-workload.js';
import { describeLength, lengthOf, sampleLength, type LengthDist } from './lengths.js';
import { reencodeBuilder, wordCountBuilder, type PromptBuilder, type PromptShape } from './prompt-builder.js';
import { cellRng, Stream } from './seeding.js';
import { isServerTokenizer } from './server-tokenizer.js';
import type { Tokenizer } from './tokenizer.js';
import { loadTrace } from './trace.js';
import type { ConversationWorkload, Workload, WorkItem } from './types.js';
import { calibrateWordModel, localCounter, type ChatLayout, type TokenCounter } from './word-model.js';

export interface PrefixSpec {
  /** Tokens of each shared system prefix. */
  tokens: number;
  /** Number of distinct prefixes; each request gets one at random (seeded). */
  groups: number;
}

interface Common {
  /** Build chat messages and count the chat template's tokens (for chat APIs). */
  chat?: boolean;
}

export type WorkloadSpec =
  | (Common & { kind: 'synthetic'; prompt: LengthDist; output: LengthDist; prefix?: PrefixSpec })
  | (Common & DatasetSpec & { kind: 'dataset' })
  | (Common & {
      kind: 'conversation';
      turns: LengthDist;
      /** Tokens of each user message (turn 0: the whole first request). */
      userTokens: LengthDist;
      output: LengthDist;
      thinkTimeMs: number | LengthDist;
      prefix?: PrefixSpec;
    })
  | (Common & { kind: 'trace'; path: string; timeScale?: number; format?: 'jsonl' | 'csv'; blockTokens?: number });

export interface WorkloadDeps {
  tokenizer: Tokenizer;
  seed: number;
  /** Items whose counts are checked against the tokenizer (or the server) before the run (default 16, server 3). */
  validate?: number;
}

/** One line for the run header, without building anything. */
export function describeWorkload(spec: WorkloadSpec, tokenizerName?: string): string {
  const tok = tokenizerName ? ` (${tokenizerName})` : '';
  const chat = spec.chat ? ', chat template counted' : '';
  const prefix = 'prefix' in spec && spec.prefix ? `, ${spec.prefix.groups} shared prefixes of ${spec.prefix.tokens} tokens` : '';
  switch (spec.kind) {
    case 'synthetic':
      return `synthetic prompts of ${lengthOf(spec.prompt, 'token')}${tok}, ${lengthOf(spec.output, 'output token')}${prefix}${chat}`;
    case 'dataset':
      return `prompts from ${spec.path}${spec.numPrompts ? ` (${spec.numPrompts} sampled)` : ''}${tok}, ${spec.output ? lengthOf(spec.output, 'output token') : 'output lengths from the file'}${chat}`;
    case 'conversation':
      return `conversations of ${lengthOf(spec.turns, 'turn')}, user messages of ${lengthOf(spec.userTokens, 'token')}${tok}, ${lengthOf(spec.output, 'output token')}, think time ${typeof spec.thinkTimeMs === 'number' ? `${spec.thinkTimeMs}` : describeLength(spec.thinkTimeMs)} ms${prefix}${chat}`;
    case 'trace':
      return `trace replay of ${spec.path}${spec.timeScale && spec.timeScale !== 1 ? ` at time scale ${spec.timeScale}` : ''}${tok}${chat}`;
  }
}

/**
 * Builds the workload a spec describes. Prompt lengths are exact in the tokenizer's count: a word model is
 * calibrated (locally, or with a few /tokenize requests for a server tokenizer) and sample items are checked
 * against a full count before the run; where the model does not hold, prompts are fitted by re-encoding.
 */
export async function createWorkload(spec: WorkloadSpec, deps: WorkloadDeps): Promise<Workload> {
  validateSpec(spec);
  const { tokenizer, seed } = deps;
  const description = describeWorkload(spec, tokenizer.name);
  if (spec.kind === 'dataset') return datasetWorkload(spec, tokenizer, seed, description);

  const server = isServerTokenizer(tokenizer);
  const counter: TokenCounter = server ? tokenizer : localCounter(tokenizer);
  const prefix = spec.kind === 'trace' ? undefined : spec.prefix;
  const shape: PromptShape = { chat: spec.chat ?? false, prefixTokens: prefix?.tokens ?? 0 };
  const layout: ChatLayout = shape.prefixTokens > 0 ? 'system+user' : 'user';
  const trace = spec.kind === 'trace' ? await loadTrace(spec.path, { ...(spec.timeScale ? { timeScale: spec.timeScale } : {}), ...(spec.format ? { format: spec.format } : {}) }) : undefined;

  // Conversations resend their history, traces share hash-id blocks, prefix groups share their prefix: cache hits are meant.
  const sharesPrefixes = spec.kind === 'conversation' || spec.kind === 'trace' || shape.prefixTokens > 0;
  const make = (builder: PromptBuilder, note = ''): Workload => {
    const text = description + note;
    const w =
      spec.kind === 'conversation'
        ? conversationWorkload(spec, builder, seed, text)
        : spec.kind === 'trace'
          ? (trace ?? []).some((e) => e.session !== undefined)
            ? sessionTraceWorkload(trace ?? [], builder, spec.blockTokens ?? 512, text)
            : traceWorkload(trace ?? [], builder, spec.blockTokens ?? 512, text)
          : syntheticWorkload(spec, builder, seed, text);
    return sharesPrefixes ? Object.assign(w, { sharesPrefixes: true }) : w;
  };
  const model = await calibrateWordModel(counter, shape.chat ? [layout] : []);
  if (model) {
    const workload = make(wordCountBuilder(model, shape, seed));
    const sample = Math.min(deps.validate ?? (server ? 3 : 16), workload.size ?? Number.POSITIVE_INFINITY);
    const miss = await firstMismatch(workload, sample, counter, shape.chat);
    if (!miss) return workload;
    if (server) {
      throw configError(
        `--tokenizer server: a ${miss.built}-token prompt counted ${miss.counted} on the server`,
        'the server tokenizer splits words unusually; pass --tokenizer PATH/tokenizer.json instead',
      );
    }
  } else if (server) {
    throw configError('--tokenizer server: too few one-token words in the server tokenizer', 'pass --tokenizer PATH/tokenizer.json instead');
  }
  // Blocks fitted one by one keep shared prefixes exact as text; a seam between two may merge or split a token.
  const blocksNote = trace?.some((e) => e.hashIds && e.hashIds.length > 0) ? ' (hash-id prompts: blocks shared exactly, lengths approximate within a few tokens)' : '';
  return make(reencodeBuilder(tokenizer, shape, seed), `, fitted by re-encoding${blocksNote}`);
}

async function firstMismatch(
  workload: Workload,
  n: number,
  counter: TokenCounter,
  chat: boolean,
): Promise<{ built: number; counted: number } | undefined> {
  const items: WorkItem[] = Array.from({ length: n }, (_, i) => workload.item(i));
  if (items.length === 0) return undefined;
  let counts: number[];
  if (chat) {
    if (!counter.countChat) return undefined; // no template known: content counts are all there is
    counts = await counter.countChat(items.map((it) => it.messages as ChatMessage[]));
  } else {
    counts = await counter.count(items.map((it) => it.prompt));
  }
  const i = items.findIndex((it, k) => it.promptTokens !== counts[k]);
  return i < 0 ? undefined : { built: (items[i] as WorkItem).promptTokens, counted: counts[i] as number };
}

function syntheticWorkload(
  spec: { prompt: LengthDist; output: LengthDist; prefix?: PrefixSpec },
  builder: PromptBuilder,
  seed: number,
  description: string,
): Workload {
  const cache = new Map<number, WorkItem>();
  const groups = spec.prefix && spec.prefix.tokens > 0 ? spec.prefix.groups : 0;
  return {
    description,
    item(index) {
      let item = cache.get(index);
      if (item) return item;
      const target = sampleLength(spec.prompt, cellRng(seed, Stream.promptLength, index));
      const outputTokens = sampleLength(spec.output, cellRng(seed, Stream.outputLength, index));
      const group = groups > 0 ? cellRng(seed, Stream.prefixGroup, index).int(0, groups - 1) : undefined;
      const built = builder.build(target, Stream.promptHead, index, group);
      item = { ...built, promptTokenSource: 'client-tokenizer', outputTokens, ...(group === undefined ? {} : { prefixGroup: group }) };
      if (cache.size > 4096) cache.clear();
      cache.set(index, item);
      return item;
    },
  };
}

function traceWorkload(
  entries: Awaited<ReturnType<typeof loadTrace>>,
  builder: PromptBuilder,
  blockTokens: number,
  description: string,
): Workload {
  const last = entries[entries.length - 1];
  // Indexes past the trace replay it again, one mean gap after its last entry.
  const period = last ? last.offsetMs + (entries.length > 1 ? last.offsetMs / (entries.length - 1) : 1) : 0;
  return {
    description: `${description}, ${entries.length} requests over ${((last?.offsetMs ?? 0) / 1000).toFixed(1)} s`,
    size: entries.length,
    item(index) {
      const e = entries[index % entries.length];
      if (!e) throw configError('the trace has no entries');
      const built =
        e.hashIds && e.hashIds.length > 0 && builder.blocks
          ? builder.blocks(e.hashIds, blockTokens, e.inputTokens, index)
          : builder.build(e.inputTokens, Stream.promptHead, index);
      return {
        ...built,
        promptTokenSource: 'client-tokenizer',
        outputTokens: e.outputTokens,
        arrivalOffsetMs: e.offsetMs + Math.floor(index / entries.length) * period,
      };
    },
  };
}

/**
 * A session trace (rows with `session_id`): each session is one conversation, its rows the turns in file order. The
 * first turn goes at the session's timestamp; each later turn `delay` ms after the previous reply, with the history
 * (the turns sent and the replies actually received) before its own new message of `input_length` tokens — AIPerf's
 * `message_mode: history`. Rows without a session id are sessions of one turn. `hash_ids` shape a first turn only:
 * later turns share their prefix through the history.
 */
function sessionTraceWorkload(
  entries: Awaited<ReturnType<typeof loadTrace>>,
  builder: PromptBuilder,
  blockTokens: number,
  description: string,
): ConversationWorkload {
  const sessions: Array<Awaited<ReturnType<typeof loadTrace>>> = [];
  const byId = new Map<string, number>();
  for (const e of entries) {
    const at = e.session !== undefined ? byId.get(e.session) : undefined;
    if (at !== undefined) (sessions[at] as typeof entries).push(e);
    else {
      if (e.session !== undefined) byId.set(e.session, sessions.length);
      sessions.push([e]);
    }
  }
  // Entries are sorted by time and each session's rows carry its start: sessions are in start order already.
  const turn = (id: number, t: number): WorkItem => {
    const rows = sessions[id % sessions.length] as typeof entries;
    const e = rows[t] as (typeof entries)[number];
    const conversation = { id, turn: t, turns: rows.length, thinkTimeMs: t === 0 ? 0 : (e.delayMs ?? 0) };
    if (t === 0) {
      const built =
        e.hashIds && e.hashIds.length > 0 && builder.blocks ? builder.blocks(e.hashIds, blockTokens, e.inputTokens, id) : builder.build(e.inputTokens, Stream.turnHead, id);
      return {
        ...built,
        messages: built.messages ?? [{ role: 'user', content: built.prompt }],
        promptTokenSource: 'client-tokenizer',
        outputTokens: e.outputTokens,
        conversation,
        arrivalOffsetMs: e.offsetMs,
      };
    }
    const content = builder.content(e.inputTokens, Stream.turnHead + t, id);
    return { prompt: content, messages: [{ role: 'user', content }], promptTokens: e.inputTokens, promptTokenSource: 'client-tokenizer', outputTokens: e.outputTokens, conversation };
  };
  const last = entries[entries.length - 1];
  return {
    description: `${description}, ${sessions.length} sessions (${entries.length} requests) starting over ${((last?.offsetMs ?? 0) / 1000).toFixed(1)} s`,
    size: sessions.length,
    sharesPrefixes: true,
    item: (id) => turn(id, 0),
    turn,
  };
}

function validateSpec(spec: WorkloadSpec): void {
  const prefix = spec.kind === 'synthetic' || spec.kind === 'conversation' ? spec.prefix : undefined;
  if (prefix) {
    if (!Number.isInteger(prefix.tokens) || prefix.tokens < 1) throw configError(`--prefix-tokens ${prefix.tokens}: must be a whole number ≥ 1`);
    if (!Number.isInteger(prefix.groups) || prefix.groups < 1) throw configError(`--prefix-groups ${prefix.groups}: must be a whole number ≥ 1`);
  }
  if (spec.kind === 'trace' && spec.blockTokens !== undefined && !(Number.isInteger(spec.blockTokens) && spec.blockTokens >= 1)) {
    throw configError(`trace block size ${spec.blockTokens}: must be a whole number ≥ 1`);
  }
  if (spec.kind === 'conversation' && typeof spec.thinkTimeMs === 'number' && !(spec.thinkTimeMs >= 0)) {
    throw configError(`--think-time ${spec.thinkTimeMs}: must be ≥ 0 ms`);
  }
}
