import { beforeAll, describe, expect, it } from 'vitest';
import { createWorkload } from '../../src/workload/create.js';
import { loadHfTokenizer } from '../../src/workload/hf-tokenizer.js';
import { countPromptTokens, type Tokenizer } from '../../src/workload/tokenizer.js';
import { loadTrace, parseTimestamp } from '../../src/workload/trace.js';
import { writeTinyBpe } from './tiny-bpe.js';

const F = 'test/fixtures/workload';
let tok: Tokenizer;
beforeAll(async () => {
  tok = await loadHfTokenizer(writeTinyBpe(1500));
});

async function problemLines(p: Promise<unknown>): Promise<string[]> {
  try {
    await p;
  } catch (err) {
    return (err as Error).message.split('\n').slice(1).map((l) => l.trim());
  }
  throw new Error('expected a config error');
}

describe('loadTrace', () => {
  it('reads mooncake JSONL sorted by timestamp, offsets relative to the first entry', async () => {
    const t = await loadTrace(`${F}/mooncake.jsonl`);
    expect(t.map((e) => [e.offsetMs, e.inputTokens, e.outputTokens, e.hashIds, e.line])).toEqual([
      [0, 600, 10, [1, 3], 2],
      [1000, 700, 20, [1, 2], 1],
      [2500, 100, 5, undefined, 3],
    ]);
    const fast = await loadTrace(`${F}/mooncake.jsonl`, { timeScale: 0.5 });
    expect(fast.map((e) => e.offsetMs)).toEqual([0, 500, 1250]);
  });

  it('reads Azure CSV date-times with sub-millisecond digits', async () => {
    const t = await loadTrace(`${F}/azure.csv`);
    expect(t.map((e) => [e.inputTokens, e.outputTokens, e.line])).toEqual([[120, 7, 5], [374, 44, 2], [396, 109, 3], [879, 13, 4]]);
    expect(t[0]?.offsetMs).toBe(0);
    expect(t[1]?.offsetMs).toBeCloseTo(1180.59, 2);
    expect(t[2]?.offsetMs).toBeCloseTo(1180.6, 2);
    expect(t[3]?.offsetMs).toBeCloseTo(1500, 6);
    expect(parseTimestamp('2024-05-01T00:00:00+02:00')).toBe(Date.UTC(2024, 3, 30, 22));
    expect(parseTimestamp('2024-13-01 00:00:00')).toBeUndefined();
  });

  it('reports bad rows as file:line before anything runs', async () => {
    expect(await problemLines(loadTrace(`${F}/bad-mooncake.jsonl`))).toEqual([
      `${F}/bad-mooncake.jsonl:2: "timestamp" (ms) must be a number ≥ 0`,
      `${F}/bad-mooncake.jsonl:3: "input_length" must be a whole number ≥ 1`,
      `${F}/bad-mooncake.jsonl:4: "hash_ids" must be an array of integers`,
      `${F}/bad-mooncake.jsonl:5: not valid JSON`,
    ]);
    expect(await problemLines(loadTrace(`${F}/bad-azure.csv`))).toEqual([
      `${F}/bad-azure.csv:3: TIMESTAMP "yesterday" is not a date-time`,
      `${F}/bad-azure.csv:4: ContextTokens must be a whole number ≥ 1`,
    ]);
    await expect(loadTrace(`${F}/azure.csv`, { timeScale: 0 })).rejects.toThrow(/--time-scale 0/);
  });
});

describe('trace workload', () => {
  it('carries arrival offsets and exact prompt lengths; equal hash ids give equal prompt blocks', async () => {
    const w = await createWorkload({ kind: 'trace', path: `${F}/mooncake.jsonl`, blockTokens: 256 }, { tokenizer: tok, seed: 3 });
    expect(w.size).toBe(3);
    const items = [0, 1, 2].map((i) => w.item(i));
    expect(items.map((it) => [it.arrivalOffsetMs, it.promptTokens, it.outputTokens])).toEqual([[0, 600, 10], [1000, 700, 20], [2500, 100, 5]]);
    for (const it of items) expect(countPromptTokens(tok, it.prompt)).toBe(it.promptTokens);
    // both start with block 1 (256 words), then differ
    const a = (items[0]?.prompt ?? '').split(' ');
    const b = (items[1]?.prompt ?? '').split(' ');
    expect(a.slice(0, 256)).toEqual(b.slice(0, 256));
    expect(a.slice(256, 266)).not.toEqual(b.slice(256, 266));
    // past the end the trace repeats, one mean gap later
    expect(w.item(3).arrivalOffsetMs).toBe(2500 + 1250);
    expect(w.item(3).prompt).not.toBe(items[0]?.prompt);
  });

  it('a tokenizer whose words are several tokens (re-encoding) still shares hash-id blocks, exact as text', async () => {
    const poor = await loadHfTokenizer(writeTinyBpe(60));
    const w = await createWorkload({ kind: 'trace', path: `${F}/mooncake.jsonl`, blockTokens: 256 }, { tokenizer: poor, seed: 3 });
    expect(w.description).toContain('fitted by re-encoding');
    const [a, b] = [w.item(0), w.item(1)];
    // Block 1 is the same text at the start of both prompts: a server's prefix cache sees the same 256 tokens.
    const block = poor.encode(a.prompt).slice(0, 250);
    expect(poor.encode(b.prompt).slice(0, 250)).toEqual(block);
    expect(a.prompt.slice(0, 40)).toBe(b.prompt.slice(0, 40));
    // Each length is the measured count of the whole prompt, within a few tokens of the trace's (seams between blocks).
    for (const [it, want] of [[a, 600], [b, 700]] as const) {
      expect(countPromptTokens(poor, it.prompt)).toBe(it.promptTokens);
      expect(Math.abs(it.promptTokens - want)).toBeLessThanOrEqual(4);
    }
  });
});
