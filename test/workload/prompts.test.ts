import { beforeAll, describe, expect, it } from 'vitest';
import { createWorkload, type WorkloadSpec } from '../../src/workload/create.js';
import { loadHfTokenizer } from '../../src/workload/hf-tokenizer.js';
import { countPromptTokens, loadApproxTokenizer, type Tokenizer } from '../../src/workload/tokenizer.js';
import type { WorkItem } from '../../src/workload/types.js';
import { writeTinyBpe } from './tiny-bpe.js';

let rich: Tokenizer;
let poor: Tokenizer;
beforeAll(async () => {
  rich = await loadHfTokenizer(`${writeTinyBpe(1500)}/tokenizer.json`);
  poor = await loadHfTokenizer(writeTinyBpe(60));
});

const fixed = (value: number) => ({ kind: 'fixed', value }) as const;
const synthetic = (prompt: number, extra: Partial<Extract<WorkloadSpec, { kind: 'synthetic' }>> = {}): WorkloadSpec => ({
  kind: 'synthetic', prompt: fixed(prompt), output: fixed(64), ...extra,
});
const items = (w: { item(i: number): WorkItem }, n: number) => Array.from({ length: n }, (_, i) => w.item(i));
const fullCount = (t: Tokenizer, it: WorkItem) => (it.messages && t.countChatTokens ? t.countChatTokens(it.messages) : countPromptTokens(t, it.prompt));

describe('exact-length prompts', () => {
  for (const target of [128, 512, 2048]) {
    it(`${target} tokens in 100% of prompts (tokenizer.json, BOS counted)`, async () => {
      const w = await createWorkload(synthetic(target), { tokenizer: rich, seed: 7 });
      const built = items(w, 200);
      expect(built.filter((it) => fullCount(rich, it) !== target)).toEqual([]);
      expect(built.every((it) => it.promptTokens === target && it.outputTokens === 64)).toBe(true);
      // unique at the start: no two prompts share their first six words
      expect(new Set(built.map((it) => it.prompt.split(' ').slice(0, 6).join(' '))).size).toBe(built.length);
    });
  }

  it('counts the chat template tokens', async () => {
    const w = await createWorkload(synthetic(512, { chat: true }), { tokenizer: rich, seed: 1 });
    const built = items(w, 50);
    expect(built.every((it) => it.messages?.length === 1 && it.messages[0]?.role === 'user')).toBe(true);
    expect(built.filter((it) => rich.countChatTokens?.(it.messages ?? []) !== 512)).toEqual([]);
    // the template's own tokens are part of the 512
    expect(rich.encode(built[0]?.prompt ?? '').length).toBeLessThan(512);
  });

  it('falls back to re-encoding for a tokenizer where words are several tokens, still exact', async () => {
    for (const target of [128, 512]) {
      const w = await createWorkload(synthetic(target), { tokenizer: poor, seed: 3 });
      expect(w.description).toContain('fitted by re-encoding');
      expect(items(w, 30).filter((it) => fullCount(poor, it) !== target).map((it) => fullCount(poor, it))).toEqual([]);
    }
    const chat = await createWorkload(synthetic(300, { chat: true }), { tokenizer: poor, seed: 3 });
    expect(items(chat, 10).filter((it) => fullCount(poor, it) !== 300)).toEqual([]);
  });

  it('is exact with the approximate default tokenizer too', async () => {
    const approx = await loadApproxTokenizer();
    const w = await createWorkload(synthetic(2048), { tokenizer: approx, seed: 11 });
    expect(items(w, 100).filter((it) => approx.encode(it.prompt).length !== 2048)).toEqual([]);
    expect(w.description).toBe('synthetic prompts of 2048 tokens (approx (o200k_base)), 64 output tokens');
  });

  it('samples length distributions per item, each prompt exact to its own length', async () => {
    const spec: WorkloadSpec = {
      kind: 'synthetic',
      prompt: { kind: 'normal', mean: 400, stddev: 120 },
      output: { kind: 'exponential', mean: 100 },
    };
    const built = items(await createWorkload(spec, { tokenizer: rich, seed: 5 }), 300);
    expect(built.filter((it) => fullCount(rich, it) !== it.promptTokens)).toEqual([]);
    const lens = built.map((it) => it.promptTokens);
    const mean = lens.reduce((a, b) => a + b, 0) / lens.length;
    expect(mean).toBeGreaterThan(370);
    expect(mean).toBeLessThan(430);
    expect(Math.min(...built.map((it) => it.outputTokens))).toBeGreaterThanOrEqual(1);
    expect(new Set(lens).size).toBeGreaterThan(50);
  });
});

describe('shared prefixes', () => {
  it('gives K distinct prefixes of exactly N tokens, a unique suffix and an exact total', async () => {
    const w = await createWorkload(synthetic(600, { prefix: { tokens: 256, groups: 4 } }), { tokenizer: rich, seed: 9 });
    const built = items(w, 120);
    const prefixes = new Map<number, string>();
    for (const it of built) {
      expect(fullCount(rich, it)).toBe(600);
      const words = it.prompt.split(' ');
      const prefix = words.slice(0, 256).join(' ');
      expect(rich.encode(prefix).length).toBe(256);
      const g = it.prefixGroup as number;
      if (prefixes.has(g)) expect(prefixes.get(g)).toBe(prefix);
      prefixes.set(g, prefix);
    }
    expect([...prefixes.keys()].sort()).toEqual([0, 1, 2, 3]);
    expect(new Set(prefixes.values()).size).toBe(4);
    expect(new Set(built.map((it) => it.prompt.split(' ').slice(256, 262).join(' '))).size).toBe(built.length);
  });

  it('puts the prefix in a system message for chat and counts both messages and the template', async () => {
    const w = await createWorkload(synthetic(400, { chat: true, prefix: { tokens: 128, groups: 2 } }), { tokenizer: rich, seed: 2 });
    for (const it of items(w, 20)) {
      expect(it.messages?.map((m) => m.role)).toEqual(['system', 'user']);
      expect(rich.encode(it.messages?.[0]?.content ?? '').length).toBe(128);
      expect(rich.countChatTokens?.(it.messages ?? [])).toBe(400);
    }
  });
});

describe('reproducibility', () => {
  it('the same seed gives byte-identical prompts and lengths; another seed does not', async () => {
    const spec: WorkloadSpec = { kind: 'synthetic', prompt: { kind: 'uniform', min: 100, max: 900 }, output: { kind: 'normal', mean: 200, stddev: 50 }, prefix: { tokens: 64, groups: 3 } };
    const a = JSON.stringify(items(await createWorkload(spec, { tokenizer: rich, seed: 42 }), 60));
    const b = JSON.stringify(items(await createWorkload(spec, { tokenizer: rich, seed: 42 }), 60));
    const c = JSON.stringify(items(await createWorkload(spec, { tokenizer: rich, seed: 43 }), 60));
    expect(a).toBe(b);
    expect(a).not.toBe(c);
  });

  it('items do not depend on the order they are asked for', async () => {
    const w1 = await createWorkload(synthetic(256), { tokenizer: rich, seed: 1 });
    const w2 = await createWorkload(synthetic(256), { tokenizer: rich, seed: 1 });
    const forward = items(w1, 20);
    const backward = Array.from({ length: 20 }, (_, i) => w2.item(19 - i)).reverse();
    expect(JSON.stringify(backward)).toBe(JSON.stringify(forward));
  });
});
