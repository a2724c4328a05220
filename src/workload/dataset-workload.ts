import type { LengthDist } from './lengths.js';
import { sampleLength } from './lengths.js';
import { loadDataset, type DatasetEntry, type DatasetFormat } from './dataset.js';
import { cellRng, Stream } from './seeding.js';
import { countPromptTokens, type Tokenizer } from './tokenizer.js';
import type { Workload, WorkItem } from './types.js';

export interface DatasetSpec {
  path: string;
  format?: DatasetFormat;
  /** CSV prompt column (`--data-column`). */
  column?: string;
  outputColumn?: string;
  /** Use this many entries (`--num-prompts`); default all. */
  numPrompts?: number;
  /** Seeded random order (default true); false keeps file order. */
  shuffle?: boolean;
  /** Overrides every output length (file values and ShareGPT reference lengths). */
  output?: LengthDist;
  /** Output length of entries the file gives none (no `output_tokens`, no reply to measure): `--output-tokens`. */
  defaultOutputTokens?: number;
  chat?: boolean;
}

/** Output length when neither the file nor the spec gives one: `--output-tokens`' default (run-options.ts), as --help says. */
export const DEFAULT_DATASET_OUTPUT_TOKENS = 128;

export async function datasetWorkload(spec: DatasetSpec, tokenizer: Tokenizer, seed: number, description: string): Promise<Workload> {
  const data = await loadDataset(spec.path, {
    ...(spec.format ? { format: spec.format } : {}),
    ...(spec.column ? { column: spec.column } : {}),
    ...(spec.outputColumn ? { outputColumn: spec.outputColumn } : {}),
  });
  const order = data.entries.map((_, i) => i);
  if (spec.shuffle ?? true) {
    const rng = cellRng(seed, Stream.sample);
    for (let i = order.length - 1; i > 0; i--) {
      const j = rng.int(0, i);
      [order[i], order[j]] = [order[j] as number, order[i] as number];
    }
  }
  const chosen = order.slice(0, spec.numPrompts ?? order.length).map((i) => data.entries[i] as DatasetEntry);
  const cache = new Map<number, WorkItem>();
  const count = (e: DatasetEntry): number => {
    const messages = e.messages ?? [{ role: 'user' as const, content: e.prompt }];
    if (spec.chat && tokenizer.countChatTokens) return tokenizer.countChatTokens(messages);
    return spec.chat ? messages.reduce((n, m) => n + tokenizer.encode(m.content).length, 0) : countPromptTokens(tokenizer, e.prompt);
  };
  const skipped = data.skipped > 0 ? `, ${data.skipped} conversations without a reply skipped` : '';
  const fallback = spec.defaultOutputTokens ?? DEFAULT_DATASET_OUTPUT_TOKENS;
  // Said, not silent: entries with no output length of their own ask for --output-tokens' value.
  const unsized = spec.output ? 0 : chosen.filter((e) => e.outputTokens === undefined && e.reference === undefined).length;
  const sized = unsized === 0 ? '' : `, ${unsized === chosen.length ? (unsized === 1 ? 'it has' : 'none has') : `${unsized} have`} no output_tokens: ${fallback} output tokens (--output-tokens)`;
  return {
    description: `${description} [${data.format}, ${chosen.length} of ${data.entries.length} ${chosen.length === 1 && data.entries.length === 1 ? 'entry' : 'entries'}${skipped}${sized}]`,
    size: chosen.length,
    item(index) {
      const slot = index % chosen.length;
      let item = cache.get(slot);
      if (item) return item;
      const e = chosen[slot] as DatasetEntry;
      const outputTokens = spec.output
        ? sampleLength(spec.output, cellRng(seed, Stream.outputLength, slot))
        : (e.outputTokens ?? (e.reference !== undefined ? Math.max(1, tokenizer.encode(e.reference).length) : fallback));
      // Counted lazily: only the entries a run uses pay for tokenization.
      item = {
        prompt: e.prompt,
        ...(e.messages ? { messages: e.messages } : spec.chat ? { messages: [{ role: 'user', content: e.prompt }] } : {}),
        promptTokens: count(e),
        promptTokenSource: 'client-tokenizer',
        outputTokens,
      };
      if (cache.size > 4096) cache.clear();
      cache.set(slot, item);
      return item;
    },
  };
}
