import type { ChatMessage } from '../dialects/types.js';
import { PromptText } from './prompt-text.js';
import { Stream } from './seeding.js';
import { countPromptTokens, type Tokenizer } from './tokenizer.js';
import { layoutMessages, type ChatLayout, type WordModel } from './word-model.js';
import { WORDS } from './words.js';

/** How prompts are wrapped: chat messages (the template's tokens are counted) and/or a shared prefix. */
export interface PromptShape {
  chat: boolean;
  /** Tokens of each shared prefix (its text alone); 0 = none. */
  prefixTokens: number;
}

export interface BuiltPrompt {
  prompt: string;
  messages?: ChatMessage[];
  promptTokens: number;
}

export interface PromptBuilder {
  /** 'word-count': counted by construction from a calibrated word model; 're-encode': fitted per prompt. */
  readonly mode: 'word-count' | 're-encode';
  /** Whether promptTokens includes the chat template's tokens (false: content only, no template known). */
  readonly chatCounted: boolean;
  /** A prompt of `target` tokens unique at its start to (stream, key); with `group`, after that group's prefix. */
  build(target: number, stream: number, key: number, group?: number): BuiltPrompt;
  /** Bare text of `tokens` tokens (no special or template tokens counted), unique at its start to (stream, key). */
  content(tokens: number, stream: number, key: number): string;
  /** A text of `words` words made of trace blocks (no unique head), for hash-id replay. */
  blocks?(hashIds: readonly number[], blockTokens: number, target: number, key: number): BuiltPrompt;
}

function assemble(shape: PromptShape, prefix: string, content: string): Omit<BuiltPrompt, 'promptTokens'> {
  if (!shape.chat) return { prompt: prefix ? `${prefix} ${content}` : content };
  return { prompt: content, messages: layoutMessages(prefix ? 'system+user' : 'user', prefix, content) };
}

/** Exact by construction: every word is one token, so the count is overhead + words (checked by validation). */
export function wordCountBuilder(model: WordModel, shape: PromptShape, seed: number): PromptBuilder {
  const text = new PromptText(model.words, seed);
  const layout: ChatLayout = shape.prefixTokens > 0 ? 'system+user' : 'user';
  const chatOverhead = model.chatOverhead[layout];
  const overhead = shape.chat ? (chatOverhead ?? 0) : model.specials;
  const prefixes = new Map<number, string>();
  const prefixOf = (group: number | undefined): string => {
    if (group === undefined || shape.prefixTokens <= 0) return '';
    let p = prefixes.get(group);
    if (p === undefined) {
      p = text.text(shape.prefixTokens, Stream.prefixHead, group);
      prefixes.set(group, p);
    }
    return p;
  };
  const fixed = (group: number | undefined): number => overhead + (group === undefined ? 0 : shape.prefixTokens);
  return {
    mode: 'word-count',
    chatCounted: !shape.chat || chatOverhead !== undefined,
    build(target, stream, key, group) {
      const words = Math.max(1, target - fixed(group));
      const content = text.text(words, stream, key);
      return { ...assemble(shape, prefixOf(group), content), promptTokens: fixed(group) + words };
    },
    content: (tokens, stream, key) => text.text(Math.max(1, tokens), stream, key),
    blocks(hashIds, blockTokens, target, key) {
      const words = Math.max(1, target - overhead);
      const parts: string[] = [];
      let left = words;
      for (const h of hashIds) {
        if (left <= 0) break;
        const n = Math.min(blockTokens, left);
        parts.push(text.block(n, h));
        left -= n;
      }
      // Trace entries whose blocks cover less than their length get a unique tail.
      if (left > 0) parts.push(parts.length === 0 ? text.text(left, Stream.block, key) : text.block(left, -1 - key));
      const content = parts.join(' ');
      return { ...assemble({ ...shape, prefixTokens: 0 }, '', content), promptTokens: overhead + words };
    },
  };
}

/**
 * For tokenizers where the word model does not hold: start from a word text, then re-encode and trim or pad
 * token by token until the count is exact (decode → re-encode drifts at the seams). Slower: one encode per step.
 */
export function reencodeBuilder(tokenizer: Tokenizer, shape: PromptShape, seed: number): PromptBuilder {
  const text = new PromptText(WORDS, seed);
  const filler = tokenizer.encode(` ${text.block(512, 0)}`);
  const chat = tokenizer.countChatTokens?.bind(tokenizer);
  const prefixes = new Map<number, string>();
  const blockTexts = new Map<string, string>();
  const prefixOf = (group: number | undefined): string => {
    if (group === undefined || shape.prefixTokens <= 0) return '';
    let p = prefixes.get(group);
    if (p === undefined) {
      const start = text.text(shape.prefixTokens, Stream.prefixHead, group);
      p = fit(tokenizer, start, shape.prefixTokens, (t) => tokenizer.encode(t).length, filler).text;
      prefixes.set(group, p);
    }
    return p;
  };
  const measure = (prefix: string) => (content: string): number => {
    const a = assemble(shape, prefix, content);
    if (a.messages && chat) return chat(a.messages);
    return a.messages ? tokenizer.encode(content).length : countPromptTokens(tokenizer, a.prompt);
  };
  return {
    mode: 're-encode',
    chatCounted: !shape.chat || chat !== undefined,
    build(target, stream, key, group) {
      const prefix = prefixOf(group);
      const m = measure(prefix);
      const guess = Math.max(1, target - m(text.text(1, stream, key)) + 1);
      const { text: content, count } = fit(tokenizer, text.text(guess, stream, key), target, m, filler);
      return { ...assemble(shape, prefix, content), promptTokens: count };
    },
    content(tokens, stream, key) {
      const n = Math.max(1, tokens);
      return fit(tokenizer, text.text(n, stream, key), n, (t) => tokenizer.encode(t).length, filler).text;
    },
    // Each block is fitted alone to its token count and joined with spaces: prompts sharing leading hash ids share
    // exactly the same text prefix; the whole prompt's count is measured (a seam may merge or split a token).
    blocks(hashIds, blockTokens, target, key) {
      const noPrefix = measure('');
      const word = text.text(1, Stream.block, key);
      const overhead = Math.max(0, noPrefix(word) - tokenizer.encode(word).length);
      const parts: string[] = [];
      let left = Math.max(1, target - overhead);
      for (const h of hashIds) {
        if (left <= 0) break;
        const n = Math.min(blockTokens, left);
        const id = `${h}:${n}`;
        let block = blockTexts.get(id);
        if (block === undefined) {
          block = fit(tokenizer, text.block(n, h), n, (t) => tokenizer.encode(t).length, filler).text;
          blockTexts.set(id, block);
        }
        parts.push(block);
        left -= n;
      }
      if (left > 0) parts.push(this.content(left, Stream.block, key));
      const content = parts.join(' ');
      return { ...assemble({ ...shape, prefixTokens: 0 }, '', content), promptTokens: noPrefix(content) };
    },
  };
}

function fit(
  tokenizer: Tokenizer,
  start: string,
  target: number,
  measure: (text: string) => number,
  filler: number[],
): { text: string; count: number } {
  let text = start;
  let count = measure(text);
  let ids = tokenizer.encode(text);
  for (let attempt = 0; attempt < 64 && count !== target; attempt++) {
    if (count > target) {
      if (ids.length <= 1) break;
      ids = ids.slice(0, Math.max(1, ids.length - (count - target)));
    } else {
      ids = ids.concat(filler.slice(0, Math.min(filler.length, target - count)));
    }
    text = tokenizer.decode(ids);
    count = measure(text);
    ids = tokenizer.encode(text);
  }
  return { text, count };
}
