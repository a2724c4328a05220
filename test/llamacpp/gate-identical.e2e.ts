/**
 * Issue 51 item 12(a) against a real llama-server: two runs of one unchanged server, gated against each other in
 * both orders, never fail (exit 1). Before the gate carried run-to-run variation, single runs of one llama.cpp
 * configuration failed 8 of 30 ordered pairs (research/real-engine-2026-12-07.md §5). Exit 0 and 3 are both
 * right here: with one run a side an unchanged server is "inconclusive" unless its runs agree closely. The two
 * runs go to one server, so each has its own --seed (other prompts, the same lengths: no prefix-cache hits on the
 * second). The verdicts are printed, not bounded beyond "never 1": wall-clock figures on a shared machine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_SHAPE, makeTinyGguf } from '../../scripts/llamacpp/make-tiny-gguf.js';
import type { GateReport } from '../../src/gate/index.js';
import { runCli } from '../helpers/cli.js';
import { type RunResult, runInferbench } from './inferbench-run.js';
import { type LlamaServer, startLlamaServer } from './llama-server-process.js';

const build = inject('llamaServerBuild');
const skipReason = 'skipReason' in build ? build.skipReason : undefined;

const SLOTS = 4;
/** 4 streams on 4 slots, 128/64 tokens, 60 measured requests a run: the report's gate runs, on the tiny model. */
const RUN = ['--profile', 'concurrent', '--concurrency', String(SLOTS), '--prompt-tokens', '128', '--output-tokens', '64', '--max-requests', '60'];
const RUN_LIMIT_MS = 3 * 60_000;

const report = (title: string, lines: string[]): void => console.log([`[llama.cpp] ${title}`, ...lines.map((l) => `  ${l}`)].join('\n'));

describe.skipIf(skipReason !== undefined)('gate: two runs of one llama-server, in both orders', () => {
  let server: LlamaServer;
  let modelDir: string | undefined;
  let first: RunResult;
  let second: RunResult;

  beforeAll(async () => {
    if (!('dir' in build)) return;
    modelDir = mkdtempSync(join(tmpdir(), 'inferbench-gguf-'));
    const model = join(modelDir, 'tiny-llama.gguf');
    makeTinyGguf(join(build.dir, 'ggml-vocab-gpt-2.gguf'), model, { ...DEFAULT_SHAPE, eosBias: 4 });
    server = await startLlamaServer({ binary: join(build.dir, 'bin/llama-server'), model, parallel: SLOTS, ctx: 4096, threads: 1 });
    // One after another: runs sharing the cores would measure each other.
    first = await runInferbench(server.url, [...RUN, '--seed', '41', '--label', 'gate-a'], RUN_LIMIT_MS);
    second = await runInferbench(server.url, [...RUN, '--seed', '42', '--label', 'gate-b'], RUN_LIMIT_MS);
  }, 2 * RUN_LIMIT_MS + 120_000);

  afterAll(async () => {
    await server?.stop();
    if (modelDir !== undefined) rmSync(modelDir, { recursive: true, force: true });
  });

  it('never exits 1 (a regression) in either order: 0 or 3', async () => {
    const lines: string[] = [];
    for (const [baseline, candidate] of [
      [first, second],
      [second, first],
    ] as const) {
      const r = await runCli(['gate', '--baseline', baseline.outDir, '--candidate', candidate.outDir, '--json'], { timeoutMs: 60_000 });
      const doc = JSON.parse(r.stdout) as GateReport;
      lines.push(
        `${baseline.summary.context.label} → ${candidate.summary.context.label}: exit ${r.code} (${doc.verdict})`,
        ...doc.checks.map((c) => `  ${c.metric} ${(100 * c.change).toFixed(1)}% [${(100 * c.low).toFixed(1)}%, ${(100 * c.high).toFixed(1)}%] vs ${c.threshold}: ${c.verdict}`),
      );
      expect([0, 3], `${lines.join('\n')}\n${r.stderr}`).toContain(r.code);
      expect(doc.exitCode).toBe(r.code);
      expect(doc.checks.some((c) => c.verdict === 'fail')).toBe(false);
    }
    report('gate of two runs of one server (4 streams, 60 requests each)', lines);
  }, 180_000);
});
