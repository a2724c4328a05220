/**
 * One pair of `inferbench run` (N, then 3N) against the paced server, for profiling and quick before/after
 * checks of the run rows of bench:overhead (prints one JSON line; the full bench reports medians of several).
 *
 *   npx tsx bench/_run-pair.ts [--n=640] [--burst] [--cli=OTHER/bin/inferbench.js]
 */
import { loadavg } from 'node:os';
import { assertFreshBuild, runCliPair } from './_overhead-run.js';

const n = Number(process.argv.find((a) => a.startsWith('--n='))?.slice(4) ?? 640);
const cli = process.argv.find((a) => a.startsWith('--cli='))?.slice(6);
try {
  if (!cli) assertFreshBuild();
} catch (err) {
  console.error(`error: ${(err as Error).message}`);
  process.exit(2);
}
const load0 = loadavg()[0] ?? NaN;
const row = await runCliPair({ n, streams: 128, promptTokens: 16, outputTokens: 64, ttftMs: 20, itlMs: 10, burst: process.argv.includes('--burst'), ...(cli ? { cli } : {}) });
const r = (x: number): number => Math.round(x * 100) / 100;
console.log(JSON.stringify({ cli: cli ?? 'this checkout', burst: row.burst === true, n, user: r(row.userUsPerToken), kernel: r(row.kernelUsPerToken), wakeups: r(row.wakeupsPerToken), tokPerS: Math.round(row.tokensPerS), load: [load0, loadavg()[0] ?? NaN].map(r) }));
