/**
 * Prompt token ids and their block hashes, for the simulated prefix cache.
 *
 * The ids are what the sim's tokenizer makes of the prompt the client sent (o200k BPE plus a Llama-3-style chat
 * template, the same rule countPrompt/countChat count with), so two prompts share cached blocks exactly when
 * their leading tokens are the same. Hashes are chained over 16-token blocks as vLLM's are: block i's hash
 * covers its own tokens and, through the previous hash, every token before it. Only full blocks are hashed.
 */
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { BLOCK_TOKENS } from '../cost/memory.js';
import { SEGMENT_CHARS, safeCut } from './filler.js';
import { asObj, type Obj } from './request.js';

const BOS = 128000;
const HEADER_START = 128006;
const HEADER_END = 128007;
const EOT = 128009;
const BLANK_LINE = 271;
const ROLE_IDS: Record<string, number> = { system: 9125, user: 882, assistant: 78191, tool: 14506 };
const NO_SPECIALS = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };

/** o200k ids of a text (no special tokens), encoded in the segments countTextTokens counts in. */
export function encodeText(text: string, out: number[] = []): number[] {
  let start = 0;
  while (start < text.length) {
    const end = text.length - start <= SEGMENT_CHARS ? text.length : safeCut(text, start + SEGMENT_CHARS);
    for (const id of encode(text.slice(start, end), NO_SPECIALS)) out.push(id);
    start = end;
  }
  return out;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  let s = '';
  if (Array.isArray(content)) for (const part of content) if (typeof asObj(part)?.['text'] === 'string') s += (part as { text: string }).text;
  return s;
}

function roleId(role: unknown): number {
  if (typeof role !== 'string') return 882;
  const known = ROLE_IDS[role];
  if (known !== undefined) return known;
  let h = 0;
  for (let i = 0; i < role.length; i++) h = (Math.imul(h, 31) + role.charCodeAt(i)) >>> 0;
  return 100000 + (h % 20000);
}

/** A chat prompt as template + content ids: BOS, per message header(4) + content + end of turn, generation prompt(4). */
export function chatTokenIds(messages: readonly unknown[], extraPerMessage?: (m: Obj) => readonly number[]): number[] {
  const ids: number[] = [BOS];
  for (const raw of messages) {
    const m = asObj(raw) ?? {};
    ids.push(HEADER_START, roleId(m['role']), HEADER_END, BLANK_LINE);
    if (extraPerMessage) for (const id of extraPerMessage(m)) ids.push(id);
    encodeText(contentText(m['content']), ids);
    ids.push(EOT);
  }
  ids.push(HEADER_START, ROLE_IDS['assistant'] as number, HEADER_END, BLANK_LINE);
  return ids;
}

const isIds = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x));

/** A completion prompt: token ids as sent, or BOS + the text's ids (a one-element list is unwrapped). */
export function completionTokenIds(prompt: unknown, bos = true): number[] | undefined {
  if (Array.isArray(prompt) && prompt.length === 1 && (typeof prompt[0] === 'string' || isIds(prompt[0]))) return completionTokenIds(prompt[0], bos);
  if (isIds(prompt)) return prompt;
  if (typeof prompt !== 'string') return undefined;
  return encodeText(prompt, bos ? [BOS] : []);
}

/**
 * The prompt's token ids from a request body of any engine the sim serves with a prefix cache: chat `messages`,
 * completions `prompt`, SGLang native `text` / `input_ids`. Undefined when the body has none of them.
 */
export function promptTokenIds(body: unknown): number[] | undefined {
  const o = asObj(body);
  if (!o) return undefined;
  if (Array.isArray(o['messages']) && o['messages'].length > 0) return chatTokenIds(o['messages']);
  for (const key of ['prompt', 'text', 'input_ids']) if (o[key] !== undefined) return completionTokenIds(o[key]);
  return undefined;
}

/** 53-bit chained hashes of the full 16-token blocks of `ids` (two 32-bit multiply-xorshift lanes). */
export function blockHashes(ids: readonly number[]): number[] {
  const out: number[] = [];
  let a = 0x811c9dc5;
  let b = 0x01000193;
  const full = Math.floor(ids.length / BLOCK_TOKENS);
  for (let blk = 0; blk < full; blk++) {
    for (let i = blk * BLOCK_TOKENS; i < (blk + 1) * BLOCK_TOKENS; i++) {
      const t = ids[i] as number;
      a = Math.imul(a ^ t, 0x9e3779b1);
      a ^= a >>> 15;
      b = Math.imul(b ^ (t + 0x7f4a7c15), 0x85ebca6b);
      b ^= b >>> 13;
    }
    // Fold the block boundary in, so that [x][y] and [xy] never chain to the same value.
    a = Math.imul(a ^ blk, 0xc2b2ae35) >>> 0;
    b = Math.imul(b ^ (blk + 1), 0x27d4eb2f) >>> 0;
    out.push((a & 0x1fffff) * 4294967296 + b);
  }
  return out;
}
