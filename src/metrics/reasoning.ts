import type { Exchange } from '../transport/exchange.js';
import type { Tokenizer } from '../workload/tokenizer.js';

/**
 * Reasoning models stream their thinking before the answer. Where the engine says which text is reasoning (its own
 * field: vLLM/SGLang/lmdeploy/llama.cpp `reasoning_content`, newer servers `reasoning`, Ollama `thinking`), the
 * transport keeps it apart (Exchange.reasoningParts, firstAnswerAtMs). Where no reasoning parser runs, the thinking is
 * inline: `--reasoning-format think-tags` reads the text between `<think>` and `</think>` as reasoning and the first
 * non-blank text after it as the answer's start.
 */
export type ReasoningFormat = 'fields' | 'think-tags';

export interface ReasoningFigures {
  reasoningTokens: number;
  /** Where reasoningTokens came from. */
  reasoningTokenSource: 'server-usage' | 'client-tokenizer' | 'chunk-count';
  /** Arrival of the first answer token; undefined when the reply never got past its reasoning. */
  firstAnswerAtMs?: number;
}

const OPEN = '<think>';
const CLOSE = '</think>';

/** The request's reasoning, or undefined when it did not reason. */
export function reasoningOf(ex: Exchange, format: ReasoningFormat, tokenizer?: Tokenizer): ReasoningFigures | undefined {
  if (format === 'think-tags') return thinkTags(ex, tokenizer);
  const parts = ex.reasoningParts;
  if (!parts || parts.length === 0) return undefined;
  const server = ex.usage?.reasoningTokens;
  const count = server !== undefined ? { n: server, src: 'server-usage' as const } : counted(parts.join(''), ex.reasoningFrames ?? parts.length, tokenizer);
  return { reasoningTokens: count.n, reasoningTokenSource: count.src, ...(ex.firstAnswerAtMs !== undefined ? { firstAnswerAtMs: ex.firstAnswerAtMs } : {}) };
}

function counted(text: string, frames: number, tokenizer?: Tokenizer): { n: number; src: 'client-tokenizer' | 'chunk-count' } {
  return tokenizer ? { n: tokenizer.encode(text).length, src: 'client-tokenizer' } : { n: frames, src: 'chunk-count' };
}

function thinkTags(ex: Exchange, tokenizer?: Tokenizer): ReasoningFigures | undefined {
  const parts = ex.textParts;
  const text = parts.join('');
  const open = text.indexOf(OPEN);
  // Some templates open the think block in the prompt: the reply then starts inside it, with only </think>.
  const close = text.indexOf(CLOSE, open < 0 ? 0 : open + OPEN.length);
  if (close < 0 && open < 0) return undefined;
  const from = open < 0 ? 0 : open + OPEN.length;
  const inner = text.slice(from, close < 0 ? text.length : close);
  let answerAt: number | undefined;
  if (close >= 0) {
    // The answer starts at the first non-blank character after </think>: find the part (and its arrival) holding it.
    let i = close + CLOSE.length;
    while (i < text.length && /\s/.test(text[i] as string)) i++;
    if (i < text.length) {
      let seen = 0;
      for (let k = 0; k < parts.length; k++) {
        seen += (parts[k] as string).length;
        if (seen > i) {
          answerAt = ex.contentTimesMs[k];
          break;
        }
      }
    }
  }
  const server = ex.usage?.reasoningTokens;
  const reasoningFrames = countFramesBefore(parts, close < 0 ? text.length : close);
  const count = server !== undefined ? { n: server, src: 'server-usage' as const } : counted(inner, reasoningFrames, tokenizer);
  return { reasoningTokens: count.n, reasoningTokenSource: count.src, ...(answerAt !== undefined ? { firstAnswerAtMs: answerAt } : {}) };
}

function countFramesBefore(parts: readonly string[], end: number): number {
  let seen = 0;
  let n = 0;
  for (const p of parts) {
    if (seen >= end) break;
    seen += p.length;
    n++;
  }
  return n;
}
