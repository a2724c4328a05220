/**
 * The simulated router in front of `inferbench sim --replicas N` (issue 34 item 3): which replica serves a request.
 * round-robin: in turn. least-load: the fewest requests in flight (ties: the next in turn). prefix-aware: the replica
 * that has served the longest leading run of this prompt's blocks (its prefix cache most likely holds them), as
 * SGLang's router and llm-d's prefix scorer do; a new prefix, or a best match much busier than the least busy
 * replica, goes to the least loaded one. Prompts are compared as chained hashes of 256-character blocks of their
 * text (what a router sees: it does not tokenize), each replica remembering its most recent BLOCKS_KEPT blocks.
 * `predict` has no text: its requests name their shared prefix (group and length), and pickChain takes the chained
 * 16-token block hashes the virtual engine gets (sim/virtual-prefix.ts) — the same decisions on other block units.
 */
export const ROUTER_POLICIES = ['round-robin', 'least-load', 'prefix-aware'] as const;
export type RouterPolicy = (typeof ROUTER_POLICIES)[number];

const BLOCK_CHARS = 256;
const BLOCKS_KEPT = 100_000;
/** prefix-aware leaves its match for the least loaded replica when the match has this many more in flight… */
const BALANCE_ABS = 16;
/** …and more than this many times as many. */
const BALANCE_REL = 2;

export class SimRouter {
  private readonly inFlight: number[];
  private readonly seen: Map<number, true>[];
  private next = 0;

  constructor(
    readonly replicas: number,
    readonly policy: RouterPolicy,
  ) {
    this.inFlight = new Array<number>(replicas).fill(0);
    this.seen = Array.from({ length: replicas }, () => new Map<number, true>());
  }

  /** The replica for a request whose prompt text is `text` (undefined: not a generation request). */
  pick(text: string | undefined): number {
    return this.pickChain(text === undefined || this.policy !== 'prefix-aware' ? undefined : blockChain(text));
  }

  /** The replica for a request whose prompt is the chain of block hashes `blocks` (undefined: none known). */
  pickChain(blocks: readonly number[] | undefined): number {
    if (this.policy === 'round-robin') return this.turn();
    if (this.policy === 'least-load' || blocks === undefined) return this.leastLoaded();
    let best = -1;
    let bestLen = 0;
    for (let r = 0; r < this.replicas; r++) {
      const seen = this.seen[r] as Map<number, true>;
      let n = 0;
      while (n < blocks.length && seen.has(blocks[n] as number)) n++;
      if (n > bestLen || (n === bestLen && n > 0 && best >= 0 && (this.inFlight[r] as number) < (this.inFlight[best] as number))) {
        best = r;
        bestLen = n;
      }
    }
    const least = this.leastLoaded();
    const pick = best < 0 || this.tooBusy(best, least) ? least : best;
    this.remember(pick, blocks);
    return pick;
  }

  started(replica: number): void {
    this.inFlight[replica] = (this.inFlight[replica] as number) + 1;
  }

  ended(replica: number): void {
    this.inFlight[replica] = (this.inFlight[replica] as number) - 1;
  }

  private tooBusy(match: number, least: number): boolean {
    const a = this.inFlight[match] as number;
    const b = this.inFlight[least] as number;
    return a - b > BALANCE_ABS && a > BALANCE_REL * b;
  }

  private turn(): number {
    const r = this.next;
    this.next = (r + 1) % this.replicas;
    return r;
  }

  private leastLoaded(): number {
    let best = this.next;
    for (let k = 1; k < this.replicas; k++) {
      const r = (this.next + k) % this.replicas;
      if ((this.inFlight[r] as number) < (this.inFlight[best] as number)) best = r;
    }
    this.next = (best + 1) % this.replicas;
    return best;
  }

  private remember(replica: number, blocks: readonly number[]): void {
    const seen = this.seen[replica] as Map<number, true>;
    for (const b of blocks) {
      seen.delete(b);
      seen.set(b, true);
    }
    // Oldest first in a Map's order: drop the least recently seen beyond the bound.
    for (const key of seen.keys()) {
      if (seen.size <= BLOCKS_KEPT) break;
      seen.delete(key);
    }
  }
}

/** Chained FNV-1a hashes of the text's full 256-character blocks: block i's hash covers every character before it. */
export function blockChain(text: string): number[] {
  const out: number[] = [];
  let h = 0x811c9dc5;
  const full = Math.floor(text.length / BLOCK_CHARS) * BLOCK_CHARS;
  for (let i = 0; i < full; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
    if ((i + 1) % BLOCK_CHARS === 0) out.push(h);
  }
  return out;
}

/** The prompt text of an OpenAI-style (or TGI/SGLang/Ollama) request body, as a router reads it; undefined if none. */
export function promptText(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const o = body as Record<string, unknown>;
  if (Array.isArray(o['messages'])) {
    let s = '';
    for (const m of o['messages'] as unknown[]) {
      const msg = (typeof m === 'object' && m !== null ? m : {}) as Record<string, unknown>;
      const c = msg['content'];
      s += `<${String(msg['role'])}>`;
      if (typeof c === 'string') s += c;
      else if (Array.isArray(c)) for (const part of c) if (typeof (part as { text?: unknown })?.text === 'string') s += (part as { text: string }).text;
    }
    return s;
  }
  for (const key of ['prompt', 'inputs', 'text']) {
    const v = o[key];
    if (typeof v === 'string') return v;
    if (Array.isArray(v) && typeof v[0] === 'string') return v[0];
  }
  return undefined;
}
