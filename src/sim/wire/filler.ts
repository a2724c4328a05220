/**
 * Generated text and prompt-token accounting.
 *
 * Output: deterministic filler where every token is one English word with a leading space, chosen so
 * that each is a single token in o200k and cl100k (checked by test). A client that counts words, or
 * re-tokenizes with a GPT-style BPE, gets exactly the number of tokens the engine generated.
 *
 * Prompt: exact when token ids are sent. Otherwise the o200k token count (gpt-tokenizer) plus one BOS
 * token, as Llama-family tokenizers add. o200k is what inferbench's own workload uses to size prompts,
 * so the sim reports the count the client aimed for; it costs ~0.1 µs per character on the event loop
 * (≈0.3 ms for a 4k-char prompt, measured), which is acceptable at arrival rates a 2-core host sustains.
 * Prompts longer than LONG_PROMPT_CHARS fall back to chars/4 to bound that blocking time.
 */
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

const WORDS: readonly string[] = [
  'the', 'of', 'and', 'to', 'in', 'is', 'that', 'it', 'for', 'was', 'on', 'are', 'as', 'with', 'be', 'at',
  'this', 'have', 'from', 'or', 'one', 'had', 'by', 'word', 'but', 'not', 'what', 'all', 'were', 'we', 'when', 'your',
  'can', 'said', 'there', 'use', 'an', 'each', 'which', 'she', 'do', 'how', 'their', 'if', 'will', 'up', 'other', 'about',
  'out', 'many', 'then', 'them', 'these', 'so', 'some', 'her', 'would', 'make', 'like', 'him', 'into', 'time', 'has', 'look',
  'two', 'more', 'write', 'go', 'see', 'number', 'no', 'way', 'could', 'people', 'my', 'than', 'first', 'water', 'been', 'call',
  'who', 'oil', 'its', 'now', 'find', 'long', 'down', 'day', 'did', 'get', 'come', 'made', 'may', 'part', 'over', 'new',
  'sound', 'take', 'only', 'little', 'work', 'know', 'place', 'year', 'live', 'me', 'back', 'give', 'most', 'very', 'after', 'thing',
  'our', 'just', 'name', 'good', 'sentence', 'man', 'think', 'say', 'great', 'where', 'help', 'through', 'much', 'before', 'line', 'right',
  'too', 'mean', 'old', 'any', 'same', 'tell', 'boy', 'follow', 'came', 'want', 'show', 'also', 'around', 'form', 'three', 'small',
  'set', 'put', 'end', 'does', 'another', 'well', 'large', 'must', 'big', 'even', 'such', 'because', 'turn', 'here', 'why', 'ask',
  'went', 'men', 'read', 'need', 'land', 'different', 'home', 'us', 'move', 'try', 'kind', 'hand', 'picture', 'again', 'change', 'off',
  'play', 'spell', 'air', 'away', 'animal', 'house', 'point', 'page', 'letter', 'mother', 'answer', 'found', 'study', 'still', 'learn', 'should',
  'world', 'high', 'every', 'near', 'add', 'food', 'between', 'own', 'below', 'country', 'plant', 'last', 'school', 'father', 'keep', 'tree',
  'never', 'start', 'city', 'earth', 'eye', 'light', 'thought', 'head', 'under', 'story', 'saw', 'left', 'few', 'while', 'along', 'might',
  'close', 'something', 'seem', 'next', 'hard', 'open', 'example', 'begin', 'life', 'always', 'those', 'both', 'paper', 'together', 'got', 'group',
  'often', 'run', 'important', 'until', 'children', 'side', 'feet', 'car', 'mile', 'night', 'walk', 'white', 'sea', 'began', 'grow', 'took',
];
const TEXTS: readonly string[] = WORDS.map((w) => ' ' + w);

/** Text of generated token `i` for a request whose filler starts at `offset`. */
export function tokenText(offset: number, i: number): string {
  return TEXTS[(offset + i * 37) & 255] as string;
}

/** A stable fake vocabulary id for token `i` (output_ids, TGI token.id). */
export function tokenId(offset: number, i: number): number {
  return 1000 + ((offset + i * 37) & 255);
}

/** The first `n` tokens concatenated. */
export function fillerText(offset: number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += tokenText(offset, i);
  return s;
}

export function fillerIds(offset: number, n: number): number[] {
  const ids = new Array<number>(n);
  for (let i = 0; i < n; i++) ids[i] = tokenId(offset, i);
  return ids;
}

export const LONG_PROMPT_CHARS = 200_000;

/** Tokens in a piece of text (no special tokens). */
export function countTextTokens(text: string): number {
  if (text.length === 0) return 0;
  if (text.length > LONG_PROMPT_CHARS) return Math.ceil(text.length / 4);
  return countTokens(text);
}

/** Result of reading a prompt field: a token count, or why it is unusable. */
export type PromptCount = { ok: true; tokens: number; text: string } | { ok: false; message: string };

function isTokenIds(v: unknown): v is number[] {
  return Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x));
}

/**
 * A completion-style prompt: a string, a list with one string, token ids, or a list with one id list.
 * Text gets +1 for BOS (`bos` false for APIs that send text verbatim, e.g. raw Ollama).
 */
export function countPrompt(prompt: unknown, bos = true): PromptCount {
  if (typeof prompt === 'string') return { ok: true, tokens: countTextTokens(prompt) + (bos ? 1 : 0), text: prompt };
  if (isTokenIds(prompt)) return { ok: true, tokens: prompt.length, text: '' };
  if (Array.isArray(prompt) && prompt.length === 1) {
    const only = prompt[0];
    if (typeof only === 'string' || isTokenIds(only)) return countPrompt(only, bos);
  }
  if (Array.isArray(prompt) && prompt.length > 1) return { ok: false, message: 'the simulated engine serves one prompt per request' };
  return { ok: false, message: 'prompt must be a string or a list of token ids' };
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    let s = '';
    for (const part of content) {
      if (part !== null && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') s += (part as { text: string }).text;
    }
    return s;
  }
  return '';
}

/**
 * Chat prompt tokens with a Llama-3-style template: BOS, 5 template tokens per message
 * (header start, role, header end, blank line, end-of-turn), 4 for the assistant generation prompt.
 */
export function countChat(messages: unknown): PromptCount {
  if (!Array.isArray(messages) || messages.length === 0) return { ok: false, message: 'messages must be a non-empty list' };
  let tokens = 1 + 4;
  let text = '';
  for (const m of messages) {
    if (m === null || typeof m !== 'object') return { ok: false, message: 'each message must be an object' };
    const c = contentText((m as { content?: unknown }).content);
    tokens += countTextTokens(c) + 5;
    text += c;
  }
  return { ok: true, tokens, text };
}

/**
 * Text of token `i` as a server prints it: a natural stop ends on the EOS token, which counts as a
 * generated token (usage counts it) but adds no text (TGI instead streams it as a special token).
 */
export function tokenOut(offset: number, i: number, finish: string | null): string {
  return finish === 'stop' ? '' : tokenText(offset, i);
}

/** Whole generated text of `count` tokens ending with `finish`. */
export function outputText(offset: number, count: number, finish: string): string {
  return fillerText(offset, finish === 'stop' && count > 0 ? count - 1 : count);
}
