/**
 * What `predict` says about a llama.cpp server on a CPU and about a calibration from several runs (issue 51 item 12g,
 * real-engine-2026-12-07.md §4): `KV cache 3705776 tokens` for a server started with `-c 4096`, an ITL interval of
 * 1–443 ms from tables that measured GPUs only, and `error on that run` / `(127 re-predictions of the run)` for two
 * runs. In-process, in virtual time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { applyCalibrationFlags } from '../../src/cli/calibration-flags.js';
import { predictCommand } from '../../src/cli/predict-command.js';
import { resolveRunOptions } from '../../src/config/run-options.js';
import { writeVirtualRun } from './calibrate-run-helpers.js';

const root = mkdtempSync(join(tmpdir(), 'ib-predict-cpu-texts-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function sink(): NodeJS.WriteStream {
  const s = new PassThrough();
  s.resume();
  return s as unknown as NodeJS.WriteStream;
}

const CPU_FLAGS = { engine: 'llamacpp', model: 'Llama-3.2-1B', quant: 'Q4_K_M', gpu: 'cpu:1c:20', profile: 'synchronous', maxRequests: '2', promptTokens: '64', outputTokens: '8' };

describe('predict of a llama.cpp server on a CPU', () => {
  it("shows the KV cache the server's -c gives, or says it is not limited; no interval from GPU tables", async () => {
    const bare = await predictCommand(resolveRunOptions(CPU_FLAGS, {}), { stdout: sink(), stderr: sink() });
    const engineLine = bare.doc.notes[0] as string;
    expect(engineLine).toMatch(/^engine model: llama\.cpp server/);
    expect(engineLine).toContain("KV cache not limited (llama-server's -c sets it: give it as --ctx-size N)");
    expect(engineLine).not.toMatch(/KV cache \d+ tokens/);
    // No published table measured a CPU: no interval (was ITL 1.03–443 ms), and the note says why.
    expect(bare.doc.stages[0]?.predictionIntervals).toBeUndefined();
    expect(bare.doc.notes).toContainEqual(expect.stringMatching(/^no prediction intervals: every published table measured GPUs, so none describes the error on a CPU \(cpu:1c:20gbs:96gflops:64gib\); --calibrate-from RUN/));
    expect(bare.doc.notes.join('\n')).not.toMatch(/leave-one-table-out/);

    const withCtx = await predictCommand(resolveRunOptions(CPU_FLAGS, {}), { stdout: sink(), stderr: sink() }, undefined, { slots: { maxNumSeqs: 4, ctxSize: 4096 } });
    expect(withCtx.doc.notes[0]).toMatch(/llama\.cpp server \(4 slots of 1024 tokens, -c 4096; continuous batching\), max_model_len 1024, KV cache 4096 tokens \(256 blocks\)/);
  });
});

describe('predict --calibrate-from with several runs', () => {
  it('names the runs: "error on those runs", "re-predictions of the 2 runs"', async () => {
    const engine = { engine: 'vllm', model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1 };
    const flags = { profile: 'concurrent', concurrency: '1,4', maxRequests: '12', promptTokens: '256', outputTokens: '32' };
    const a = await writeVirtualRun(join(root, 'a'), { ...engine, modelTimeScale: 1.3 }, flags);
    const b = await writeVirtualRun(join(root, 'b'), { ...engine, modelTimeScale: 1.3 }, { ...flags, seed: '7' });
    const said = (from: string): { text: string; notes: string[] } => {
      let text = '';
      const { notes } = applyCalibrationFlags(engine, { calibrateFrom: from, validateOn: [], explicit: {} }, { write: (s: string) => (text += s) });
      return { text, notes };
    };
    const two = said(`${a},${b}`);
    expect(two.text).toMatch(/^calibration: fitted vllm-v1 Qwen2-7B-Instruct on A100-80GB to 4 rows of .* in [\d.]+ s \(\d+ re-predictions of the 2 runs\)$/m);
    expect(two.text).toMatch(/^ {2}error on those runs, median \|predicted\/measured − 1\|, before → after: /m);
    expect(two.text).not.toMatch(/that run|of the run\)/);
    expect(two.notes.join('\n')).toMatch(/fitted to the measured runs .* \(error of their worst figure on them /);

    const one = said(a);
    expect(one.text).toMatch(/\(\d+ re-predictions of the run\)\n {2}error on that run, /);
    expect(one.notes.join('\n')).toMatch(/fitted to the measured run .* \(error of its worst figure on it /);
  }, 60_000);
});
