import type { ChatMessage } from '../dialects/types.js';
import { sampleLength, type LengthDist } from './lengths.js';
import type { PromptBuilder } from './prompt-builder.js';
import { cellRng, Stream } from './seeding.js';
import type { ConversationWorkload, Workload, WorkItem } from './types.js';

export interface ConversationPlan {
  turns: LengthDist;
  /** Tokens of each user message (for the first turn: the whole first request incl. prefix and template). */
  userTokens: LengthDist;
  output: LengthDist;
  /** Pause between a reply and the next turn, in ms (a number for a fixed pause). */
  thinkTimeMs: number | LengthDist;
  prefix?: { tokens: number; groups: number };
}

/**
 * Conversations: turn 0 is a full request (optionally after a shared system prefix); later turns carry only the
 * new user message, which the driver appends to the history with buildTurnMessages after the actual reply.
 */
export function conversationWorkload(
  plan: ConversationPlan,
  builder: PromptBuilder,
  seed: number,
  description: string,
): ConversationWorkload {
  const turnsOf = (id: number) => sampleLength(plan.turns, cellRng(seed, Stream.turns, id));
  const turn = (id: number, t: number): WorkItem => {
    const turns = turnsOf(id);
    const rng = cellRng(seed, Stream.promptLength, id, t);
    const target = sampleLength(plan.userTokens, rng);
    const outputTokens = sampleLength(plan.output, cellRng(seed, Stream.outputLength, id, t));
    const think = typeof plan.thinkTimeMs === 'number' ? plan.thinkTimeMs : sampleLength(plan.thinkTimeMs, cellRng(seed, Stream.thinkTime, id, t));
    const conversation = { id, turn: t, turns, thinkTimeMs: t === 0 ? 0 : think };
    if (t === 0) {
      const group = plan.prefix && plan.prefix.groups > 0 ? cellRng(seed, Stream.prefixGroup, id).int(0, plan.prefix.groups - 1) : undefined;
      const built = builder.build(target, Stream.turnHead, id, group);
      return {
        ...built,
        messages: built.messages ?? [{ role: 'user', content: built.prompt }],
        promptTokenSource: 'client-tokenizer',
        outputTokens,
        conversation,
        ...(group === undefined ? {} : { prefixGroup: group }),
      };
    }
    // Later turns: the user message alone, counted as content (the history's tokens come from the replies).
    const content = builder.content(target, Stream.turnHead + t, id);
    return {
      prompt: content,
      messages: [{ role: 'user', content }],
      promptTokens: target,
      promptTokenSource: 'client-tokenizer',
      outputTokens,
      conversation,
    };
  };
  return { description, item: (id) => turn(id, 0), turn };
}

/** The messages for the next turn: the history so far (with the actual replies), then the new user message. */
export function buildTurnMessages(history: readonly ChatMessage[], next: string | WorkItem): ChatMessage[] {
  if (typeof next !== 'string' && history.length === 0 && next.messages) return [...next.messages];
  return [...history, { role: 'user', content: typeof next === 'string' ? next : next.prompt }];
}

/** The history after a reply arrived: what was sent plus the assistant's actual text. */
export function appendReply(sent: readonly ChatMessage[], reply: string): ChatMessage[] {
  return [...sent, { role: 'assistant', content: reply }];
}

export function isConversationWorkload(w: Workload): w is ConversationWorkload {
  return typeof (w as Partial<ConversationWorkload>).turn === 'function';
}
