import { Rng } from '../core/rng.js';
import { describeLength, sampleLength, type LengthDist } from './lengths.js';
import type { WorkItem, Workload } from './types.js';

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
