import type { ChatMessage } from '../dialects/types.js';
import { countPromptTokens, type Tokenizer } from './tokenizer.js';
import { LEAD_WORD, WORDS } from './words.js';

/** Where counts come from: the local tokenizer, or the server's /tokenize. */
export interface TokenCounter {
  readonly name: string;
  /** Counts of plain prompts as the server counts them (special tokens included). */
  count(texts: readonly string[]): Promise<number[]>;
  /** Counts of chat requests (template tokens included); absent when the source cannot render the template. */
  countChat?(conversations: readonly (readonly ChatMessage[])[]): Promise<number[]>;
}

/** Chat layouts the builder produces: one user message, or a system prefix then the user message. */
export type ChatLayout = 'user' | 'system+user';

/**
 * Words confirmed to be one token each after a space, so a text of n such words joined by spaces and starting
 * with LEAD_WORD counts `specials + n` (plain) or `chatOverhead[layout] + n` (content words of a chat).
 */
export interface WordModel {
  /** The qualifying words (LEAD_WORD among them). */
  words: string[];
  specials: number;
  chatOverhead: Partial<Record<ChatLayout, number>>;
  /** Counting requests the calibration made. */
  requests: number;
}

/** A counter over a local tokenizer. */
export function localCounter(tokenizer: Tokenizer): TokenCounter {
  const counter: TokenCounter = {
    name: tokenizer.name,
    count: (texts) => Promise.resolve(texts.map((t) => countPromptTokens(tokenizer, t))),
  };
  const chat = tokenizer.countChatTokens?.bind(tokenizer);
  return chat ? { ...counter, countChat: (convs) => Promise.resolve(convs.map((c) => chat(c))) } : counter;
}

export function layoutMessages(layout: ChatLayout, system: string, user: string): ChatMessage[] {
  return layout === 'user'
    ? [{ role: 'user', content: user }]
    : [
        { role: 'system', content: system },
        { role: 'user', content: user },
      ];
}

const MIN_WORDS = 32;

/**
 * Finds the one-token words by counting all candidates in one text and bisecting only where the total shows
 * multi-token words: 2 counts when every word is one token, a few more per exception (batched per level).
 * Returns undefined when too few words qualify or the request budget runs out.
 */
export async function calibrateWordModel(
  counter: TokenCounter,
  layouts: readonly ChatLayout[],
  maxRequests = 48,
): Promise<WordModel | undefined> {
  let requests = 0;
  const count = async (texts: string[]): Promise<number[]> => {
    requests += texts.length;
    return counter.count(texts);
  };
  const candidates = [...WORDS];
  const [base, all] = await count([LEAD_WORD, `${LEAD_WORD} ${candidates.join(' ')}`]);
  if (base === undefined || all === undefined) return undefined;
  const specials = base - 1;
  const bad = new Set<string>();
  let frontier = [{ list: candidates, excess: all - base - candidates.length }];
  while (frontier.length > 0) {
    const split = frontier.filter((n) => n.excess > 0 && n.list.length > 1);
    for (const n of frontier) if (n.excess > 0 && n.list.length === 1) bad.add(n.list[0] as string);
    if (split.length === 0) break;
    if (requests + split.length > maxRequests) {
      for (const n of split) for (const w of n.list) bad.add(w);
      break;
    }
    const halves = split.map((n) => n.list.slice(0, Math.ceil(n.list.length / 2)));
    const counts = await count(halves.map((h) => `${LEAD_WORD} ${h.join(' ')}`));
    frontier = split.flatMap((n, i) => {
      const a = halves[i] as string[];
      const ea = (counts[i] ?? 0) - base - a.length;
      return [
        { list: a, excess: ea },
        { list: n.list.slice(a.length), excess: n.excess - ea },
      ];
    });
  }
  const words = candidates.filter((w) => !bad.has(w));
  // Texts joined after a prefix start with a spaced LEAD_WORD, so it must be one token there too.
  if (words.length < MIN_WORDS || bad.has(LEAD_WORD)) return undefined;

  const chatOverhead: Partial<Record<ChatLayout, number>> = {};
  if (layouts.length > 0 && counter.countChat) {
    const sample = [LEAD_WORD, ...words.slice(1, 8)].join(' ');
    requests += layouts.length;
    const counts = await counter.countChat(layouts.map((l) => layoutMessages(l, sample, sample)));
    layouts.forEach((l, i) => {
      chatOverhead[l] = (counts[i] ?? 0) - (l === 'user' ? 8 : 16);
    });
  }
  return { words, specials, chatOverhead, requests };
}
