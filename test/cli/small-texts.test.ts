import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dropIdenticalRepeats } from '../../src/cli/run-outcome.js';
import { scaleLine } from '../../src/cli/sim-command.js';
import { interval } from '../../src/metrics/repeats.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import { describeWorkload } from '../../src/workload/create.js';
import { runOptionProblem } from '../helpers/run-option-problem.js';
import { runCli } from '../helpers/cli.js';
import { startSlotServer } from '../helpers/slot-server.js';
import { VLLM } from '../interop/helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'inferbench-small-texts-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const problemOf = runOptionProblem;

describe('issue 36 item 10: --data without output_tokens', () => {
  it('asks --output-tokens (default 128, as --help says), says so, and notes that a 1-entry file repeats', async () => {
    const server = await startSlotServer({ slots: 4, prefillMs: 1, tokenMs: 1, promptTokens: 16 });
    try {
      const data = join(tmp, 'one.jsonl');
      writeFileSync(data, '{"prompt":"hi"}\n');
      const out = join(tmp, 'data-run');
      const r = await runCli(['run', '--target', server.url, '--api', 'openai-completions', '--data', data, '--profile', 'concurrent', '--concurrency', '2', '--max-requests', '4', '--tokenizer', 'approx', '--out', out, '--no-progress']);
      expect(r.code, r.stderr).toBe(0);
      const asked = readFileSync(join(out, 'requests.jsonl'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { requestedOutputTokens: number }).requestedOutputTokens);
      expect(new Set(asked)).toEqual(new Set([128]));
      expect(r.stdout).toMatch(/\[jsonl, 1 of 1 entry, it has no output_tokens: 128 output tokens \(--output-tokens\)\]/);
      expect(r.stdout).toMatch(new RegExp(`note: ${data.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} has 1 entry and the run sent ${asked.length} requests: its one entry was sent ${asked.length} times`));
    } finally {
      await server.close();
    }
  });
});

describe('issue 36 item 10: polish', () => {
  it('help: --warmup says what its default means; compare --allow-mismatch sits in a group', async () => {
    const run = await runCli(['run', '--help']);
    const flat = run.stdout.replace(/\s+/g, ' ');
    expect(flat).toMatch(/--warmup <time> also leave out the requests sent in each row's first <time>: 10s, 30 \(seconds\), 1m \(default: 0: only the ramp-up is left out\)/);
    const compare = await runCli(['compare', '--help']);
    expect(compare.stdout).toMatch(/Matching runs:\n\s+--allow-mismatch/);
  });

  it('ls --results of a missing folder: one error line, exit 2', async () => {
    const missing = join(tmp, 'no-such-folder');
    const r = await runCli(['ls', '--results', missing]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([`error: no results folder at ${missing} (pass the folder your runs were saved in (--results DIR), or start a run first)`]);
  });

  it('a comma list with an empty item is refused, not read as a shorter list', async () => {
    expect(problemOf({ profile: 'constant', rate: '1,,2' })).toBe('--rate "1,,2" has an empty item; separate the values with single commas, e.g. --rate 1,2');
    expect(problemOf({ profile: 'concurrent', concurrency: '1,2,' })).toBe('--concurrency "1,2," has an empty item; separate the values with single commas, e.g. --concurrency 1,2');
    expect(problemOf({ profile: 'constant', rate: '1', format: 'md,,csv' })).toMatch(/^--format "md,,csv" has an empty item/);
    const r = await runCli(['run', '--rate', '1,,2', '--out', join(tmp, 'never')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: --rate "1,,2" has an empty item/m);
  });

  it('plurals: 1 token, 1 output token, 1 turn', () => {
    const one = { kind: 'fixed' as const, value: 1 };
    expect(describeWorkload({ kind: 'synthetic', prompt: one, output: one })).toBe('synthetic prompts of 1 token, 1 output token');
    expect(describeWorkload({ kind: 'synthetic', prompt: { kind: 'fixed', value: 512 }, output: { kind: 'fixed', value: 128 } })).toBe('synthetic prompts of 512 tokens, 128 output tokens');
  });

  it('predict --repeat 3 on constant arrivals: no "± 0.00", a note that repeats of a deterministic simulation add nothing', async () => {
    const r = await runCli(['predict', '--rate', '2', '--max-seconds', '3', '--repeat', '3']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/± 0\.00/);
    expect(r.stdout).toMatch(/--repeat 3: the 3 repeats of this simulation gave the same figures .* no ± is shown/);
    // Repeats that differ keep their intervals.
    const differing = [{ intervals: { ttftMean: interval([1, 2, 3]) } }] as unknown as StageSummary[];
    expect(dropIdenticalRepeats(differing, 3)).toBeUndefined();
    expect(differing[0]?.intervals).toBeDefined();
  });

  it('import of a file already imported says which run it repeats', async () => {
    const results = join(tmp, 'imports');
    const first = await runCli(['import', VLLM, '--results', results]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).not.toMatch(/already imported/);
    const id = /\(id ([0-9a-f]{8})\)$/m.exec(first.stdout)?.[1];
    const again = await runCli(['import', VLLM, '--results', results]);
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(new RegExp(`^note: .* was already imported as ${id} \\(`, 'm'));
  });

  it("sim's banner says how --model-time-scale changes the engine", () => {
    expect(scaleLine(undefined)).toBe('');
    expect(scaleLine(1)).toBe('');
    expect(scaleLine(1.3)).toBe("  model time scaled by 1.3 (--model-time-scale): the engine runs 1.3× slower than the catalog's figures for this GPU\n");
    expect(scaleLine(0.5)).toMatch(/runs 2× faster/);
  });
});
