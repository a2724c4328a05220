import type { ChatMessage } from '../dialects/types.js';

/** Counts and builds token sequences. The default is an approximation of the server's tokenizer. */
export interface Tokenizer {
  readonly name: string;
  /** True when counts are the server's own (its tokenizer.json, or calibrated against its /tokenize). */
  readonly exact: boolean;
  /** Token ids of the text alone, without BOS/EOS or other special tokens. */
  encode(text: string): number[];
  decode(ids: number[]): string;
  /** Tokens the tokenizer adds around a plain prompt (BOS, ...): the server counts them. 0 when absent. */
  readonly specialTokens?: number;
  /** Tokens of messages rendered through the model's chat template, incl. the tokens the template adds. */
  countChatTokens?(messages: readonly ChatMessage[]): number;
}

/** The line the CLI prints when no tokenizer was given. */
export const APPROX_TOKENIZER_WARNING =
  'prompt lengths use an approximate tokenizer (o200k_base); pass --tokenizer PATH/tokenizer.json or --tokenizer server for exact counts';

let approx: Promise<Tokenizer> | undefined;

/** OpenAI's o200k encoding (gpt-tokenizer): fast and offline; only approximates other models' tokenizers. */
export function loadApproxTokenizer(): Promise<Tokenizer> {
  approx ??= import('gpt-tokenizer/encoding/o200k_base').then((m) => ({
    name: 'approx (o200k_base)',
    exact: false,
    encode: (text: string) => m.encode(text),
    decode: (ids: number[]) => m.decode(ids),
    specialTokens: 0,
  }));
  return approx;
}

/** Token count of a plain prompt as the server sees it (text plus the special tokens it adds). */
export function countPromptTokens(tokenizer: Tokenizer, text: string): number {
  return tokenizer.encode(text).length + (tokenizer.specialTokens ?? 0);
}
