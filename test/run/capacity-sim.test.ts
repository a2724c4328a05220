import { describe, expect, it } from 'vitest';
import type { CapacityResult } from '../../src/load/capacity-types.js';
import { runCli } from '../helpers/cli.js';

// `predict --profile capacity` runs the capacity search on the simulator in virtual time: the same search as
// `run --profile capacity`, with nothing left to the host's timing, so its answer is the same on every machine and
// every run. How close `run` against `inferbench sim` of the same configuration comes to it is a timing figure, and
// depends on how busy the machine is: bench/capacity-known.ts prints it (docs/capacity.md).
const config = ['--engine', 'vllm', '--model', 'Qwen2-7B-Instruct', '--gpu', 'A100-80GB', '--prompt-tokens', '128', '--output-tokens', '32', '--max-seconds', '1', '--profile', 'capacity', '--slo', 'ttft:200', '--json'];

describe('capacity predicted by the simulator', () => {
  it('is the same answer every time, with its step labelled as a step', async () => {
    const [a, b] = await Promise.all([runCli(['predict', ...config]), runCli(['predict', ...config])]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const p = (JSON.parse(a.stdout) as { capacity: CapacityResult }).capacity;
    const q = (JSON.parse(b.stdout) as { capacity: CapacityResult }).capacity;
    expect(q).toEqual(p);
    expect(p.feasibleMax).toBeGreaterThan(10);
    expect(p.firstBreach as number).toBeGreaterThan(p.feasibleMax as number);
    expect(p.settled).toBe(true);
    expect(p.verdict).toMatch(/; search step ±5%, not an error bar\)$/);
    expect(p.precisionMeaning).toMatch(/^±5% is the search's step/);
  }, 240_000);
});
