import type { ChatMessage, TokenCountSource } from '../dialects/types.js';

/** Where a conversation turn sits; the driver resends history (with the actual replies) before each later turn. */
export interface ConversationTurn {
  /** Conversation number (the workload index of its first turn). */
  id: number;
  /** 0-based turn index. */
  turn: number;
  /** Number of turns this conversation has. */
  turns: number;
  /** Planned pause after the previous reply before this turn is sent (0 for the first turn). */
  thinkTimeMs: number;
}

/** One request's content as the workload built it. */
export interface WorkItem {
  prompt: string;
  messages?: ChatMessage[];
  /**
   * Prompt length in tokens as the client counted it (incl. BOS and chat-template tokens where the tokenizer
   * knows them). For conversation turns after the first, the new user message only: history comes from replies.
   */
  promptTokens: number;
  promptTokenSource: TokenCountSource;
  /** Requested output length. */
  outputTokens: number;
  /** Index of the shared prefix this prompt starts with (prefix groups). */
  prefixGroup?: number;
  /**
   * Lengths-only workloads (predict, plan): tokens of the prompt that are its group's shared prefix (BOS included),
   * for the simulator's prefix cache and router, which have no text to compare (sim/virtual-prefix.ts).
   */
  prefixTokens?: number;
  conversation?: ConversationTurn;
  /** Trace replay: when to send, in ms after the stage start (already divided by the time scale). */
  arrivalOffsetMs?: number;
  /** Embeddings: the texts of one request (`--batch-size`); promptTokens is then their sum and outputTokens 0. */
  inputs?: string[];
  /** Multimodal chat (`--images`): image data URLs sent after the text of the last user message; not in promptTokens. */
  images?: string[];
}

/** A deterministic source of requests: the same (seed, index) always gives the same item. */
export interface Workload {
  readonly description: string;
  item(index: number): WorkItem;
  /** Number of distinct items for finite sources (dataset, trace); indexes past it wrap around. */
  readonly size?: number;
  /** Prompts share prefixes on purpose (prefix groups, conversations, trace blocks): cache hits are expected. */
  readonly sharesPrefixes?: boolean;
}

/** Multi-turn workload: item(i) is the first turn of conversation i, turn(i, t) its later turns. */
export interface ConversationWorkload extends Workload {
  turn(id: number, turn: number): WorkItem;
}
