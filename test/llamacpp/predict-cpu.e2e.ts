/**
 * Calibrated `predict` of a real llama-server on this machine's CPU, described without a config file: the run records
 * the engine (llamacpp) and the GGUF path it served (whose header describes the model), and `--gpu cpu:1c:<GB/s>`
 * describes the one thread it runs on (`-t 1`). Fits on a closed-loop run, predicts an open-loop run measured after it.
 * Wall-clock figures on a shared machine are printed, not bounded; the assertions are on what is deterministic.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_SHAPE, makeTinyGguf } from '../../scripts/llamacpp/make-tiny-gguf.js';
import { runCli } from '../helpers/cli.js';
import { type RunResult, runInferbench } from './inferbench-run.js';
import { type LlamaServer, startLlamaServer } from './llama-server-process.js';

const build = inject('llamaServerBuild');
const skipReason = 'skipReason' in build ? build.skipReason : undefined;

const SLOTS = 4;
const CTX = 4096;
const THREADS = 1;
/** One thread's share of the memory bandwidth, as a round description: the fit finds the real efficiency. */
const CPU = 'cpu:1c:20';
const LENGTHS = ['--prompt-tokens', '128', '--output-tokens', '64'];
const RUN_LIMIT_MS = 5 * 60_000;

const report = (title: string, lines: string[]): void => console.log([`[llama.cpp] ${title}`, ...lines.map((l) => `  ${l}`)].join('\n'));

describe.skipIf(skipReason !== undefined)('calibrated predict of a real llama-server on a CPU, no config file', () => {
  let server: LlamaServer;
  let modelDir: string | undefined;
  let model: string;
  let fit: RunResult;
  let check: RunResult;
  const rate = 2;

  beforeAll(async () => {
    if (!('dir' in build)) return;
    modelDir = mkdtempSync(join(tmpdir(), 'inferbench-gguf-'));
    model = join(modelDir, 'tiny-llama.gguf');
    makeTinyGguf(join(build.dir, 'ggml-vocab-gpt-2.gguf'), model, { ...DEFAULT_SHAPE, eosBias: 4 });
    server = await startLlamaServer({ binary: join(build.dir, 'bin/llama-server'), model, parallel: SLOTS, ctx: CTX, threads: THREADS });
    fit = await runInferbench(server.url, ['--profile', 'concurrent', '--concurrency', '1,2,4', '--max-seconds', '15', ...LENGTHS, '--seed', '11', '--label', 'cpu-fit'], RUN_LIMIT_MS);
    check = await runInferbench(server.url, ['--profile', 'constant', '--rate', String(rate), '--max-seconds', '15', ...LENGTHS, '--seed', '12', '--label', 'cpu-check'], RUN_LIMIT_MS);
  }, 2 * RUN_LIMIT_MS + 120_000);

  afterAll(async () => {
    await server?.stop();
    if (modelDir !== undefined) rmSync(modelDir, { recursive: true, force: true });
  });

  it('fits --gpu cpu:… and the served GGUF to the measured run, and predicts the other run', async () => {
    // What a real server's run says: the engine and the model file, no hardware.
    expect(fit.summary.target.engine).toBe('llamacpp');
    expect(fit.summary.context.gpu).toBeUndefined();
    report('served model, as the run recorded it', [fit.summary.context.model]);

    const p = await runCli(['predict', '--calibrate-from', fit.outDir, '--validate-on', check.outDir, '--gpu', CPU, '--parallel', String(SLOTS), '--ctx-size', String(CTX),
      '--profile', 'constant', '--rate', String(rate), '--max-seconds', '15', ...LENGTHS, '--json']);
    expect(p.code, p.stderr).toBe(0);
    const doc = JSON.parse(p.stdout) as {
      context: { gpu: string; quant: string; model: string };
      calibration: { engine: { model: string }; before: { overallPct: number }; after: { overallPct: number }; validation: Array<{ before: { overallPct: number }; after: { overallPct: number } }> };
      stages: Array<{ metrics: Record<string, { median?: number; mean?: number }>; requestThroughput: number }>;
    };
    // The model came from the GGUF header (64 embd × 2 layers, f32), the hardware from the spec.
    expect(doc.context.quant).toBe('F32');
    expect(doc.context.gpu).toBe('cpu:1c:20gbs:96gflops:64gib');
    expect(p.stderr).toMatch(/calibration: fitted llamacpp .*tiny-llama\.gguf on cpu:1c:20 to 3 rows/);
    // The fit starts from the uncalibrated constants and keeps the best it sees: never worse on its own run.
    expect(doc.calibration.after.overallPct).toBeLessThanOrEqual(doc.calibration.before.overallPct);
    expect(doc.calibration.validation).toHaveLength(1);

    const pred = doc.stages[0];
    const measured = (m: 'ttftMs' | 'itlMs' | 'e2eMs', k: 'median' | 'mean'): number => check.summary.stages[0]?.metrics[m]?.[k] ?? Number.NaN;
    report('calibrated predict vs measured (constant rate, 128/64 tokens)', [
      ...p.stderr.split('\n').filter((l) => /^(calibration|  error|  constants|validate on)/.test(l)),
      `constant ${rate} req/s: TTFT median predicted ${pred?.metrics['ttftMs']?.median?.toFixed(1)} ms, measured ${measured('ttftMs', 'median').toFixed(1)} ms; ` +
        `ITL mean ${pred?.metrics['itlMs']?.mean?.toFixed(2)} vs ${measured('itlMs', 'mean').toFixed(2)} ms; ` +
        `req/s ${pred?.requestThroughput.toFixed(2)} vs ${check.summary.stages[0]?.requestThroughput.toFixed(2)}`,
    ]);
  }, 120_000);
});
