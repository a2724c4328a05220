import type { WorkItem, Workload } from './types.js';

/** Inputs per embeddings request when `--batch-size` is not given. */
export const DEFAULT_EMBEDDING_BATCH = 1;

/** The workload's words without its output lengths, which an embeddings run does not have. */
function withoutOutput(description: string): string {
  // Also the dataset's note on entries without output_tokens (dataset-workload.ts): embeddings generate nothing.
  return description.replace(/, (?:it has|none has|\d+ have) no output_tokens: \d+ output tokens \(--output-tokens\)/, '').replace(/, (?:[^,]* output tokens?|output lengths from the file)/, '');
}

/**
 * Embeddings requests made from any prompt workload: request i carries the texts of prompts i·B … i·B+B−1 (B =
 * `batchSize`), its prompt tokens are their sum and it asks for no output. Prompt i of the source is the same text
 * whatever the batch size, so runs with different batch sizes embed the same texts in the same order.
 */
export function embeddingWorkload(source: Workload, batchSize: number): Workload {
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batch size ${batchSize}: must be a whole number ≥ 1`);
  const per = batchSize === 1 ? '1 input per request' : `${batchSize} inputs per request`;
  const w: Workload = {
    description: `embeddings, ${per}: ${withoutOutput(source.description)}`,
    item(index: number): WorkItem {
      const inputs: string[] = [];
      let promptTokens = 0;
      let first: WorkItem | undefined;
      for (let k = 0; k < batchSize; k++) {
        const it = source.item(index * batchSize + k);
        first ??= it;
        inputs.push(it.prompt);
        promptTokens += it.promptTokens;
      }
      const head = first as WorkItem;
      return {
        prompt: head.prompt,
        inputs,
        promptTokens,
        promptTokenSource: head.promptTokenSource,
        outputTokens: 0,
        ...(head.arrivalOffsetMs !== undefined ? { arrivalOffsetMs: head.arrivalOffsetMs } : {}),
      };
    },
  };
  if (source.size !== undefined) Object.assign(w, { size: Math.ceil(source.size / batchSize) });
  if (source.sharesPrefixes) Object.assign(w, { sharesPrefixes: true });
  return w;
}
