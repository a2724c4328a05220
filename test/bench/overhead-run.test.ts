/**
 * bench:overhead's `run` rows (issue 36, item 9): the built CLI runs against the paced server in its own process,
 * its CPU is read at exit (bench/_exit-usage.mjs), and the tokens come from the server's own count. Checked here on
 * a tiny pair for what is deterministic — the run succeeds, every token of the extra requests is counted, the CPU
 * readings are there — never for how much CPU it took (that is the bench's figure).
 */
import { describe, expect, it } from 'vitest';
import { runCliPair } from '../../bench/_overhead-run.js';

describe('bench:overhead run rows', () => {
  it('measure `inferbench run` end to end: N and 3N whole runs, tokens counted by the server, CPU read at exit', async () => {
    const row = await runCliPair({ n: 8, streams: 4, promptTokens: 16, outputTokens: 8, ttftMs: 5, itlMs: 2 });
    // The 3N run sends 2N more requests than the N run, each of 8 tokens (a closed loop of 4 streams).
    expect(row.tokens).toBeGreaterThanOrEqual(2 * 8 * 8);
    expect(row.tokens % 8).toBe(0);
    for (const v of [row.userUsPerToken, row.kernelUsPerToken, row.totalUsPerToken, row.tokensPerS]) expect(Number.isFinite(v)).toBe(true);
    expect(row.totalUsPerToken).toBeCloseTo(row.userUsPerToken + row.kernelUsPerToken, 9);
  }, 120_000);
});
