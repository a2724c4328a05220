/**
 * Issue 51, item 10: `predict --gpu H999` said "invalid simulated engine: unknown GPU …", blaming an engine the user
 * never named. Each problem now stands alone, naming the value given and what is known: one line, exit 2.
 */
import { describe, expect, it } from 'vitest';
import { describeSimEngine } from '../../src/sim/create.js';
import { runCli } from '../helpers/cli.js';

const UNKNOWN_H999 = /^unknown GPU "H999" \(known GPUs: A10, .*H100.*; CPUs: .*, or cpu:<cores>c:<GB\/s>.*\)$/;

describe('an unknown GPU', () => {
  it('is its own message, with the known GPUs and the cpu: form', () => {
    expect(() => describeSimEngine({ engine: 'vllm', model: 'Llama-3.1-8B', gpu: 'H999', gpus: 1 })).toThrow(expect.objectContaining({ code: 'E_CONFIG', message: expect.stringMatching(UNKNOWN_H999) }));
  });

  it('predict --gpu H999: one line on stderr, exit 2', async () => {
    const r = await runCli(['predict', '--gpu', 'H999']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]?.replace(/^error: /, '')).toMatch(UNKNOWN_H999);
    expect(r.stderr).not.toMatch(/invalid simulated engine/);
  }, 60_000);
});
