import type { ChatMessage, TokenCountSource } from '../dialects/types.js';

/** One request's content as the workload built it. */
export interface WorkItem {
  prompt: string;
  messages?: ChatMessage[];
  /** Prompt length in tokens as the client counted it. */
  promptTokens: number;
  promptTokenSource: TokenCountSource;
  /** Requested output length. */
  outputTokens: number;
}

/** A deterministic source of requests: the same (seed, index) always gives the same item. */
export interface Workload {
  readonly description: string;
  item(index: number): WorkItem;
}
