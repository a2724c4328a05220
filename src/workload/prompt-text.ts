import type { Rng } from '../core/rng.js';
import { cellRng, Stream } from './seeding.js';
import { LEAD_WORD } from './words.js';

const HEAD_DIGITS = 4;
const CORPUS_WORDS = 16384;

/**
 * Word texts of an exact word count: LEAD_WORD, then a head that spells the key in base-|words| digits under
 * a seeded permutation (distinct keys ⇒ distinct starts), then a seeded body. Pure in (seed, stream, key, n).
 */
export class PromptText {
  private readonly words: readonly string[];
  private readonly corpus: string[];
  private readonly perms = new Map<number, string[]>();

  constructor(
    words: readonly string[],
    private readonly seed: number,
  ) {
    this.words = words;
    const rng = cellRng(seed, Stream.body);
    this.corpus = Array.from({ length: CORPUS_WORDS }, () => pick(rng, words));
  }

  /** A text of `n` words (n ≥ 1) unique to (stream, key) at its start. */
  text(n: number, stream: number, key: number): string {
    if (n <= 0) return '';
    const parts: string[] = [LEAD_WORD];
    const perm = this.perm(stream);
    let k = key;
    for (let d = 0; d < HEAD_DIGITS && parts.length < n; d++) {
      parts.push(perm[k % perm.length] as string);
      k = Math.floor(k / perm.length);
    }
    this.appendBody(parts, n - parts.length, mix2(this.seed, stream, key));
    return parts.join(' ');
  }

  /** Words only from the body corpus, for a block keyed by `key` (trace hash ids): no lead, no head. */
  block(n: number, key: number): string {
    const parts: string[] = [];
    this.appendBody(parts, n, mix2(this.seed, Stream.block, key));
    return parts.join(' ');
  }

  private appendBody(parts: string[], n: number, offsetSeed: number): void {
    let at = offsetSeed % this.corpus.length;
    let left = n;
    while (left > 0) {
      const take = Math.min(left, this.corpus.length - at);
      for (let i = at; i < at + take; i++) parts.push(this.corpus[i] as string);
      left -= take;
      at = 0;
    }
  }

  private perm(stream: number): string[] {
    let p = this.perms.get(stream);
    if (!p) {
      p = [...this.words];
      const rng = cellRng(this.seed, Stream.promptHead, stream);
      for (let i = p.length - 1; i > 0; i--) {
        const j = rng.int(0, i);
        [p[i], p[j]] = [p[j] as string, p[i] as string];
      }
      this.perms.set(stream, p);
    }
    return p;
  }
}

function pick(rng: Rng, words: readonly string[]): string {
  return words[rng.int(0, words.length - 1)] as string;
}

function mix2(seed: number, stream: number, key: number): number {
  return cellRng(seed, stream, key).int(0, 0x7fffffff);
}
