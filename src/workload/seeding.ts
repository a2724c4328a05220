import { Rng } from '../core/rng.js';

/** A 32-bit hash of the seed and keys (murmur3 finaliser per step), so items never depend on call order. */
export function mix(seed: number, ...keys: number[]): number {
  let h = (seed ^ 0x2545f491) >>> 0;
  for (const k of keys) {
    h = Math.imul(h ^ (k >>> 0), 0x9e3779b1) >>> 0;
    h ^= Math.floor(k / 4294967296) >>> 0;
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b) >>> 0;
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35) >>> 0;
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/** A generator for one (seed, keys) cell: the same keys always give the same stream. */
export function cellRng(seed: number, ...keys: number[]): Rng {
  return new Rng(mix(seed, ...keys));
}

/** Streams that seed independent parts of a workload. */
export const Stream = {
  promptLength: 1,
  outputLength: 2,
  prefixGroup: 3,
  promptHead: 4,
  prefixHead: 5,
  body: 6,
  turns: 7,
  thinkTime: 8,
  sample: 9,
  block: 10,
  image: 11,
  turnHead: 100, // + turn index
} as const;
