/**
 * Generated text and prompt-token accounting.
 *
 * Output: deterministic filler where every token is one English word with a leading space, chosen so
 * that each is a single token in o200k and cl100k (checked by test). A client that counts words, or
 * re-tokenizes with a GPT-style BPE, gets exactly the number of tokens the engine generated.
 *
 * Prompt: exact when token ids are sent. Otherwise the o200k token count (gpt-tokenizer) plus one BOS
 * token, as Llama-family tokenizers add. o200k is what inferbench's own workload uses to size prompts,
 * so the sim reports the count the client aimed for, at any length. Counting is linear in the text
 * (~15 ns per character of prose, measured: 8 ms for 800k characters) except inside one word: BPE is
 * quadratic in a pre-token's length (50k characters without a space took 1.6 s). So the text is
 * counted in segments cut where the o200k pre-tokenizer always splits, which keeps the count exact.
 */
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { imageTokensOf } from './vision.js';

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

/** Characters counted per gpt-tokenizer call (a cut is searched from here on). */
export const SEGMENT_CHARS = 4096;

const isSpace = (c: number): boolean => c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x3000 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x1680 || c === 0x202f || c === 0x205f || c === 0x85 || c === 0xfeff;

/**
 * A cut at or after `from` that the o200k pre-tokenizer never crosses: a space right after a non-space.
 * No pattern carries a non-space character on into a following space (words, numbers and punctuation
 * pre-tokens stop before it), so the pieces on both sides split exactly as the whole text does. Past
 * another SEGMENT_CHARS without one (a single "word" that long, which only synthetic text has) the cut
 * is forced, which may move the count by a token per cut.
 */
export function safeCut(text: string, from: number): number {
  const limit = Math.min(text.length, from + SEGMENT_CHARS);
  for (let p = from; p < limit; p++) {
    if (text.charCodeAt(p) === 32 && !isSpace(text.charCodeAt(p - 1))) return p;
  }
  // Never split a surrogate pair.
  const c = text.charCodeAt(limit - 1);
  return c >= 0xd800 && c <= 0xdbff ? limit - 1 : limit;
}

/** Tokens in a piece of text (no special tokens): the o200k count, at any length. */
export function countTextTokens(text: string): number {
  if (text.length <= SEGMENT_CHARS) return text.length === 0 ? 0 : countTokens(text);
  let total = 0;
  let start = 0;
  while (start < text.length) {
    const end = text.length - start <= SEGMENT_CHARS ? text.length : safeCut(text, start + SEGMENT_CHARS);
    total += countTokens(text.slice(start, end));
    start = end;
  }
  return total;
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
 * (header start, role, header end, blank line, end-of-turn), 4 for the assistant generation prompt. Images count
 * what the server noted for them (vision.ts readImages: the model's image tokens).
 */
export function countChat(messages: unknown): PromptCount {
  if (!Array.isArray(messages) || messages.length === 0) return { ok: false, message: 'messages must be a non-empty list' };
  let tokens = 1 + 4 + imageTokensOf(messages);
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

/** Reasoning tokens come first; this many of `count` generated tokens (`reasoning` = the request's reasoning length). */
export function reasoningCount(reasoning: number | undefined, count: number): number {
  return Math.min(reasoning ?? 0, count);
}

/** Generated text split into the reasoning phase (first `reasoning` tokens) and the answer, as a reasoning parser splits it. */
export function splitOutput(offset: number, reasoning: number | undefined, count: number, finish: string): { reasoning: string; answer: string } {
  const r = reasoningCount(reasoning, count);
  let answer = '';
  const end = finish === 'stop' && count > 0 ? count - 1 : count;
  for (let i = r; i < end; i++) answer += tokenText(offset, i);
  return { reasoning: fillerText(offset, r), answer };
}

/**
 * Token `i` for an engine without a reasoning parser: the reasoning phase stays in the text between
 * `<think>` and `</think>` (each a token of its own, as in Qwen3 and DeepSeek-R1 vocabularies).
 */
export function inlineTokenOut(offset: number, reasoning: number | undefined, i: number, finish: string | null): string {
  const r = reasoning ?? 0;
  if (i >= r) return tokenOut(offset, i, finish);
  if (i === 0) return r === 1 ? '<think></think>' : '<think>';
  return i === r - 1 ? '</think>' : tokenText(offset, i);
}

/** Tokens from..from+n−1 leaving in one event (a speculative step), reasoning inline; the last one carries `finish`. */
export function inlineStepText(offset: number, reasoning: number | undefined, from: number, n: number, finish: string | null): string {
  let s = '';
  for (let i = from; i < from + n; i++) s += inlineTokenOut(offset, reasoning, i, i === from + n - 1 ? finish : null);
  return s;
}

/** Whole text of `count` tokens with the reasoning phase inline. */
export function inlineOutputText(offset: number, reasoning: number | undefined, count: number, finish: string): string {
  let s = '';
  const end = finish === 'stop' && count > 0 ? count - 1 : count;
  for (let i = 0; i < end; i++) s += inlineTokenOut(offset, reasoning, i, null);
  return s;
}
