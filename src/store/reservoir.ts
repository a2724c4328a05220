/** A seeded uniform random source (mulberry32): the same seed always gives the same sequence. */
export function seededRandom(seed = 0x9e3779b9): () => number {
  let s = seed;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A seeded reservoir sample (Algorithm R): at most `limit` of the values offered, each equally likely to be kept,
 * and the same file always gives the same sample (so a chart does not change between two loads).
 */
export class Reservoir<T> {
  readonly items: T[] = [];
  private seen = 0;

  constructor(
    private readonly limit: number,
    private readonly rand: () => number = seededRandom(),
  ) {}

  offer(value: T): void {
    const n = ++this.seen;
    if (this.items.length < this.limit) this.items.push(value);
    else {
      const j = Math.floor(this.rand() * n);
      if (j < this.limit) this.items[j] = value;
    }
  }

  /** More were offered than kept. */
  get sampled(): boolean {
    return this.seen > this.limit;
  }
}
