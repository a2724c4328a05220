/** Counts and builds token sequences. The default is an approximation of the server's tokenizer. */
export interface Tokenizer {
  readonly name: string;
  /** True when this is the server's own tokenizer (counts are exact), false for an approximation. */
  readonly exact: boolean;
  encode(text: string): number[];
  decode(ids: number[]): string;
}

let approx: Promise<Tokenizer> | undefined;

/** OpenAI's o200k encoding (gpt-tokenizer): fast and offline; only approximates other models' tokenizers. */
export function loadApproxTokenizer(): Promise<Tokenizer> {
  approx ??= import('gpt-tokenizer/encoding/o200k_base').then((m) => ({
    name: 'approx (o200k_base)',
    exact: false,
    encode: (text: string) => m.encode(text),
    decode: (ids: number[]) => m.decode(ids),
  }));
  return approx;
}
