import { Rng } from '../core/rng.js';
import { describeLength, sampleLength, type LengthDist } from './lengths.js';
import type { Tokenizer } from './tokenizer.js';
import type { WorkItem, Workload } from './types.js';

// Plain English words: they tokenize close to one token each in every common vocabulary.
const WORDS = (
  'the of and to in is was for on that with as by at from his her they this have are not but had which ' +
  'were all one their there been has more when will would who also into other after first over new some ' +
  'time could these two may then do any like about people than only its most years back through where ' +
  'much before good well way even because water long little world very still own see men work place made ' +
  'live where after just name great think say help low line turn cause same mean differ move right boy old ' +
  'too does tell sentence set three want air play small end put home read hand port large spell add land ' +
  'here must big high such follow act why ask change went light kind off need house picture try again ' +
  'animal point mother near build self earth father head stand page should country found answer school ' +
  'grow study learn plant cover food sun four between state keep eye never last let thought city tree cross ' +
  'farm hard start might story saw far sea draw left late run while press close night real life few north'
).split(' ');

export interface SyntheticOptions {
  promptTokens: number;
  outputTokens: number;
  seed: number;
  tokenizer: Tokenizer;
}

/**
 * Synthetic prompts of an exact length in the client tokenizer's count, each starting with text unique
 * to its index so that prefix caches cannot serve one request from another.
 */
export function createSyntheticWorkload(opts: SyntheticOptions): Workload {
  const { promptTokens, outputTokens, tokenizer } = opts;
  const corpus = tokenizer.encode(buildCorpus(new Rng(opts.seed), Math.max(4096, promptTokens * 2 + 64)));
  const cache = new Map<number, WorkItem>();
  return {
    description: `synthetic prompts of ${promptTokens} tokens (${tokenizer.name}), ${outputTokens} output tokens`,
    item(index: number): WorkItem {
      let item = cache.get(index);
      if (!item) {
        item = { ...buildPrompt(index, promptTokens, corpus, tokenizer), outputTokens };
        if (cache.size > 4096) cache.clear();
        cache.set(index, item);
      }
      return item;
    },
  };
}

function buildCorpus(rng: Rng, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[rng.int(0, WORDS.length - 1)] ?? 'the');
  return out.join(' ');
}

function buildPrompt(
  index: number,
  target: number,
  corpus: number[],
  tokenizer: Tokenizer,
): Omit<WorkItem, 'outputTokens'> {
  const head = tokenizer.encode(`${index} ${WORDS[index % WORDS.length]}:`);
  const offset = (index * 7919) % Math.max(1, corpus.length - target);
  let ids = head.concat(corpus.slice(offset, offset + Math.max(0, target - head.length))).slice(0, target);
  let text = tokenizer.decode(ids);
  // decode → re-encode can merge tokens at the seams; adjust one token at a time until the count is exact.
  for (let attempt = 0; attempt < 16; attempt++) {
    const count = tokenizer.encode(text).length;
    if (count === target) break;
    if (count > target) ids = ids.slice(0, ids.length - (count - target));
    else ids = ids.concat(corpus.slice(0, target - count));
    text = tokenizer.decode(ids);
  }
  return { prompt: text, promptTokens: tokenizer.encode(text).length, promptTokenSource: 'client-tokenizer' };
}

/** Lengths only, no text: for the simulator in virtual time, which needs token counts and nothing else. */
export function createFixedLengthWorkload(promptTokens: number, outputTokens: number): Workload {
  const item: WorkItem = { prompt: '', promptTokens, promptTokenSource: 'client-tokenizer', outputTokens };
  return { description: `${promptTokens} prompt tokens, ${outputTokens} output tokens (lengths only)`, item: () => item };
}

/** Sampled lengths, no text: `predict` with length distributions or a trace. Item i is the same for a given seed. */
export function createLengthsWorkload(
  prompt: LengthDist,
  output: LengthDist,
  seed: number,
  trace?: ReadonlyArray<{ offsetMs: number; inputTokens: number; outputTokens: number }>,
): Workload {
  const description = trace
    ? `trace of ${trace.length} requests (lengths only)`
    : `${describeLength(prompt)} prompt tokens, ${describeLength(output)} output tokens (lengths only)`;
  return {
    description,
    ...(trace ? { size: trace.length } : {}),
    item(index: number): WorkItem {
      if (trace) {
        const e = trace[index % Math.max(1, trace.length)];
        return { prompt: '', promptTokens: e?.inputTokens ?? 1, promptTokenSource: 'client-tokenizer', outputTokens: e?.outputTokens ?? 1, arrivalOffsetMs: e?.offsetMs ?? 0 };
      }
      const rng = new Rng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
      return { prompt: '', promptTokens: sampleLength(prompt, rng), promptTokenSource: 'client-tokenizer', outputTokens: sampleLength(output, rng) };
    },
  };
}
