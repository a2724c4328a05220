import { describe, expect, it } from 'vitest';
import { parseCsv } from '../../src/workload/csv.js';
import { createWorkload } from '../../src/workload/create.js';
import { loadDataset } from '../../src/workload/dataset.js';
import { loadApproxTokenizer } from '../../src/workload/tokenizer.js';

const F = 'test/fixtures/workload';

async function problemLines(p: Promise<unknown>): Promise<string[]> {
  try {
    await p;
  } catch (err) {
    expect((err as { code?: string }).code).toBe('E_CONFIG');
    return (err as Error).message.split('\n').slice(1).map((l) => l.trim());
  }
  throw new Error('expected a config error');
}

describe('loadDataset', () => {
  it('reads JSONL prompts and messages with optional output lengths', async () => {
    const d = await loadDataset(`${F}/prompts.jsonl`);
    expect(d.format).toBe('jsonl');
    expect(d.entries.map((e) => [e.line, e.outputTokens])).toEqual([[1, 32], [2, undefined], [4, 16]]);
    expect(d.entries[2]?.messages?.map((m) => m.role)).toEqual(['system', 'user']);
    expect(d.entries[2]?.prompt).toBe('Name three prime numbers.');
  });

  it('reads ShareGPT: first human turn as prompt, the next gpt turn as reference, unusable conversations skipped', async () => {
    const d = await loadDataset(`${F}/sharegpt.json`);
    expect(d.format).toBe('sharegpt');
    expect(d.skipped).toBe(1);
    expect(d.entries.map((e) => [e.line, e.prompt, e.reference])).toEqual([
      [2, 'What is the capital of France?', 'The capital of France is Paris, a city on the Seine.'],
      [15, 'Say hi, "politely".', 'Hi.'],
    ]);
  });

  it('reads CSV with a named column, RFC 4180 quoting and multi-line fields', async () => {
    const d = await loadDataset(`${F}/prompts.csv`);
    expect(d.entries.map((e) => [e.line, e.prompt, e.outputTokens])).toEqual([
      [2, 'Summarise: the quick, brown fox', 64],
      [3, 'He said "hello"\nacross two lines', undefined],
      [5, 'plain prompt', 12],
    ]);
    expect(parseCsv('a,b\r\n"x\r\ny",2\r\n').records.map((r) => r.fields)).toEqual([['a', 'b'], ['x\r\ny', '2']]);
  });

  it('reports every unusable JSONL line as file:line', async () => {
    expect(await problemLines(loadDataset(`${F}/bad.jsonl`))).toEqual([
      `${F}/bad.jsonl:2: "prompt" must be a non-empty string`,
      `${F}/bad.jsonl:3: not valid JSON`,
      `${F}/bad.jsonl:4: messages[0] needs a role (system, user, assistant) and string content`,
      `${F}/bad.jsonl:5: "output_tokens" must be a whole number ≥ 1`,
      `${F}/bad.jsonl:6: needs "prompt", "messages" or "conversations"`,
      `${F}/bad.jsonl:7: expected a JSON object`,
    ]);
  });

  it('reports bad ShareGPT entries by the line they start on', async () => {
    expect(await problemLines(loadDataset(`${F}/bad-sharegpt.json`))).toEqual([
      `${F}/bad-sharegpt.json:3: "conversations" must be an array`,
      `${F}/bad-sharegpt.json:4: conversations[0] needs string "from" and "value"`,
      `${F}/bad-sharegpt.json:5: not valid JSON`,
    ]);
  });

  it('reports bad CSV rows, a missing column and an unterminated quote', async () => {
    expect(await problemLines(loadDataset(`${F}/bad.csv`, { column: 'question' }))).toEqual([
      `${F}/bad.csv:3: empty "question"`,
      `${F}/bad.csv:4: "output_tokens" must be a whole number ≥ 1, got "zero"`,
      `${F}/bad.csv:5: 4 fields, the header has 3`,
    ]);
    expect(await problemLines(loadDataset(`${F}/bad.csv`))).toEqual([
      `${F}/bad.csv:1: no column "prompt" (columns: id, question, output_tokens); choose one with --data-column`,
    ]);
    expect(await problemLines(loadDataset(`${F}/bad-quote.csv`, { column: 'question' }))).toEqual([
      `${F}/bad-quote.csv:2: unterminated quoted field`,
    ]);
  });

  it('caps the listed problems at 20 plus a count', async () => {
    const { writeFileSync, mkdtempSync } = await import('node:fs');
    const dir = mkdtempSync('/tmp/inferbench-data-');
    writeFileSync(`${dir}/many.jsonl`, Array.from({ length: 30 }, () => '{"prompt": 3}').join('\n'));
    const lines = await problemLines(loadDataset(`${dir}/many.jsonl`));
    expect(lines).toHaveLength(21);
    expect(lines[20]).toBe('... and 10 more');
  });

  it('a missing file is one config error', async () => {
    await expect(loadDataset(`${F}/nope.jsonl`)).rejects.toThrow(/cannot read data file .*nope\.jsonl: ENOENT/);
  });
});

describe('dataset workload', () => {
  it('samples seeded, counts prompts, and takes output lengths from the file, the reference or the override', async () => {
    const tokenizer = await loadApproxTokenizer();
    const w = await createWorkload({ kind: 'dataset', path: `${F}/sharegpt.json`, shuffle: false }, { tokenizer, seed: 1 });
    expect(w.size).toBe(2);
    const first = w.item(0);
    expect(first.prompt).toBe('What is the capital of France?');
    expect(first.promptTokens).toBe(tokenizer.encode(first.prompt).length);
    expect(first.outputTokens).toBe(tokenizer.encode('The capital of France is Paris, a city on the Seine.').length);
    expect(w.item(2)).toEqual(first);

    const over = await createWorkload(
      { kind: 'dataset', path: `${F}/prompts.jsonl`, output: { kind: 'fixed', value: 99 }, numPrompts: 2 },
      { tokenizer, seed: 1 },
    );
    expect(over.size).toBe(2);
    expect([over.item(0).outputTokens, over.item(1).outputTokens]).toEqual([99, 99]);

    const orders = await Promise.all(
      [5, 5, 6].map(async (seed) => {
        const x = await createWorkload({ kind: 'dataset', path: `${F}/prompts.csv` }, { tokenizer, seed });
        return [0, 1, 2].map((i) => x.item(i).prompt).join('|');
      }),
    );
    expect(orders[0]).toBe(orders[1]);
  });
});
