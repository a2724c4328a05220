import type { SimRequestListener } from '../types.js';

/** Engine-side state of one request. */
export interface Seq {
  id: number;
  prompt: number;
  /** Tokens this request will generate. */
  target: number;
  finishReason: 'length' | 'stop';
  /** Tokens produced so far. */
  generated: number;
  /** Tokens whose KV is stored (prompt + generated − 1 once prefilled and decoding). */
  computed: number;
  blocks: number;
  /** 0 ingesting, 1 waiting, 2 running, 3 done. */
  state: 0 | 1 | 2 | 3;
  prefillStarted: boolean;
  prefillDone: boolean;
  preemptions: number;
  listener: SimRequestListener;
  /** Chained hashes of the prompt's full 16-token blocks (prefix caching); undefined = never shared. */
  blockHashes?: readonly number[];
  /** Hashes of the leading blocks this sequence holds in the prefix cache (shared, reference counted). */
  sharedHashes: number[];
  /** Prompt tokens found in the prefix cache at the last admission. */
  cachedTokens: number;
  /** Vision encoder FLOPs of the request's images, run with its first prefill step. */
  visionFlops?: number;
}

/** Tokens the engine must (re)compute before this sequence can emit its next token. */
export const pendingTokens = (s: Seq): number => s.prompt + s.generated - s.computed;

/** FIFO with cheap push-front (preempted requests go back to the head of the waiting queue). */
export class Deque<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  peek(): T | undefined {
    return this.items[this.head];
  }

  push(x: T): void {
    this.items.push(x);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const x = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return x;
  }

  unshift(x: T): void {
    if (this.head > 0) this.items[--this.head] = x;
    else this.items.unshift(x);
  }

  remove(x: T): boolean {
    const i = this.items.indexOf(x, this.head);
    if (i < 0) return false;
    this.items.splice(i, 1);
    return true;
  }
}
