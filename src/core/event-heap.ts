/** A time-ordered queue of callbacks: the virtual clock's timers and the real-time simulator's events. */
interface Entry {
  t: number;
  seq: number;
  fn: () => void;
}

/** Binary min-heap keyed by (time, insertion sequence): deterministic tie-breaking. */
export class EventHeap {
  private items: Entry[] = [];
  private counter = 0;

  get size(): number {
    return this.items.length;
  }

  push(t: number, fn: () => void): void {
    const items = this.items;
    const e: Entry = { t, seq: this.counter++, fn };
    let i = items.length;
    items.push(e);
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = items[p] as Entry;
      if (less(parent, e)) break;
      items[i] = parent;
      i = p;
    }
    items[i] = e;
  }

  peekTime(): number {
    return this.items.length ? (this.items[0] as Entry).t : Infinity;
  }

  pop(): Entry | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    const n = items.length;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      if (r < n && less(items[r] as Entry, items[l] as Entry)) c = r;
      const child = items[c] as Entry;
      if (less(last, child)) break;
      items[i] = child;
      i = c;
    }
    items[i] = last;
    return top;
  }

  clear(): void {
    this.items = [];
  }
}

function less(a: Entry, b: Entry): boolean {
  return a.t < b.t || (a.t === b.t && a.seq < b.seq);
}
