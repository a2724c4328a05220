import { Rng } from '../core/rng.js';
import { describeLength, sampleLength, type LengthDist } from './lengths.js';
import { cellRng, Stream } from './seeding.js';
import type { WorkItem, Workload } from './types.js';

/** Lengths only, no text: for the simulator in virtual time, which needs token counts and nothing else. */
export function createFixedLengthWorkload(promptTokens: number, outputTokens: number): Workload {
  const item: WorkItem = { prompt: '', promptTokens, promptTokenSource: 'client-tokenizer', outputTokens };
  return { description: `${promptTokens} prompt tokens, ${outputTokens} output tokens (lengths only)`, item: () => item };
}

/** Tokens before a prompt's text that `run`'s completions prompts count (BOS): part of the shared prefix. */
const PROMPT_SPECIALS = 1;

/**
 * Sampled lengths, no text: `predict` with length distributions or a trace. Item i is the same for a given seed.
 * `prefix` (`--prefix-tokens T --prefix-groups G`): each prompt starts with one of G shared prefixes of T tokens,
 * its group drawn as `run` draws it for the same seed and index, and is at least the prefix and one token long
 * (as run's prompt builder makes it); the items carry the group and the shared length instead of text.
 */
export function createLengthsWorkload(
  prompt: LengthDist,
  output: LengthDist,
  seed: number,
  trace?: ReadonlyArray<{ offsetMs: number; inputTokens: number; outputTokens: number }>,
  prefix?: { tokens: number; groups: number },
): Workload {
  const shared = prefix && !trace ? prefix : undefined;
  const description = trace
    ? `trace of ${trace.length} requests (lengths only)`
    : `${describeLength(prompt)} prompt tokens, ${describeLength(output)} output tokens${shared ? `, ${shared.groups} shared prefixes of ${shared.tokens} tokens` : ''} (lengths only)`;
  return {
    description,
    ...(trace ? { size: trace.length } : {}),
    ...(shared ? { sharesPrefixes: true } : {}),
    item(index: number): WorkItem {
      if (trace) {
        const e = trace[index % Math.max(1, trace.length)];
        return { prompt: '', promptTokens: e?.inputTokens ?? 1, promptTokenSource: 'client-tokenizer', outputTokens: e?.outputTokens ?? 1, arrivalOffsetMs: e?.offsetMs ?? 0 };
      }
      const rng = new Rng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
      const promptTokens = sampleLength(prompt, rng);
      const outputTokens = sampleLength(output, rng);
      if (!shared) return { prompt: '', promptTokens, promptTokenSource: 'client-tokenizer', outputTokens };
      const fixed = PROMPT_SPECIALS + shared.tokens;
      const prefixGroup = cellRng(seed, Stream.prefixGroup, index).int(0, shared.groups - 1);
      return { prompt: '', promptTokens: fixed + Math.max(1, promptTokens - fixed), promptTokenSource: 'client-tokenizer', outputTokens, prefixGroup, prefixTokens: fixed };
    },
  };
}
