/**
 * A CPU / llama.cpp deployment is describable without a hand-written config: catalogue CPUs and `cpu:<cores>c:<GB/s>`
 * specs, GGUF quantization types, llama.cpp's slots and context split, and a GGUF file that describes its own model.
 * Decode on a CPU is memory-bound: the predicted single-stream rate follows bandwidth / weight bytes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GgmlType, GgufType, type GgufValue, writeGguf } from '../../scripts/llamacpp/gguf.js';
import { PRIORS } from '../../src/sim/calibrate/priors.js';
import { QUANTS } from '../../src/sim/catalog/hardware.js';
import { deriveModel, describeSimEngine, findHardware, findModel } from '../../src/sim/index.js';
import { enumerateShapes, resolveAxes } from '../../src/plan/space.js';
import { startSimServer } from '../../src/sim/server/index.js';
import { runCli } from '../helpers/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'inferbench-cpu-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('CPU hardware', () => {
  it('resolves a generic cpu:<cores>c:<GB/s> spec, and its canonical name resolves to the same figures', () => {
    const h = findHardware('cpu:8c:60');
    expect(h.cpu).toEqual({ cores: 8 });
    expect(h.bwGBs).toBe(60);
    // No GFLOP/s given: cores × 3 GHz × 32 FP32 FLOPs per cycle, said to be an estimate.
    expect(h.tflops * 1000).toBe(8 * 3 * 32);
    expect(h.source).toMatch(/estimated/);
    const again = findHardware(h.name);
    expect({ ...again, source: '' }).toEqual({ ...h, source: '' });
    const full = findHardware('CPU:1c:20gbs:96gflops:16gib');
    expect([full.bwGBs, full.tflops * 1000, full.memGiB]).toEqual([20, 96, 16]);
    expect(full.source).not.toMatch(/estimated|assumed/);
  });

  it('has catalogue CPUs with their vendor source named', () => {
    const epyc = findHardware('AMD EPYC 9654');
    expect(epyc.cpu?.cores).toBe(96);
    expect(epyc.bwGBs).toBe(460.8);
    expect(epyc.source).toMatch(/AMD EPYC 9654 product page/);
    expect(findHardware('raspberry pi 5').bwGBs).toBeCloseTo((4267e6 * 4) / 1e9, 1);
  });

  it('refuses a malformed spec with one line naming the part and the format', () => {
    for (const bad of ['cpu:8x:60', 'cpu:8c', 'cpu:8c:fast', 'cpu:8c:60:12furlongs', 'cpu:0c:60']) {
      expect(() => findHardware(bad), bad).toThrow(/--gpu cpu:.*(core count|memory bandwidth|neither)/);
    }
  });
});

describe('llama.cpp on a CPU', () => {
  it('resolves without a config file: GGUF quant from the file name, slots split the context', () => {
    const d = describeSimEngine({ engine: 'llamacpp', model: 'Llama-3.2-1B-Instruct-Q4_K_M.gguf', gpu: 'Ryzen-9-7950X', gpus: 1, ctxSize: 4096 });
    expect(d.quant).toBe('Q4_K_M');
    expect(d.maxNumSeqs).toBe(4);
    expect(d.kvTokens).toBe(4096);
    expect(d.maxModelLen).toBe(1024);
    // No -c: the model's whole context for each request (llama-server's context from the model).
    expect(describeSimEngine({ engine: 'llamacpp', model: 'Llama-3.2-1B', gpu: 'Ryzen-9-7950X', gpus: 1 }).maxModelLen).toBe(131072);
    const two = describeSimEngine({ engine: 'llamacpp', model: 'TinyLlama-1.1B', quant: 'q8_0', gpu: 'cpu:4c:40', gpus: 1, maxNumSeqs: 2, ctxSize: 8192 });
    expect([two.quant, two.maxNumSeqs, two.kvTokens, two.maxModelLen]).toEqual(['Q8_0', 2, 8192, 4096]);
    expect(two.engineLabel).toMatch(/2 slots of 4096 tokens, -c 8192/);
    expect(() => describeSimEngine({ engine: 'llamacpp', model: 'TinyLlama-1.1B', gpu: 'cpu:4c:40', gpus: 2 })).toThrow(/is a CPU.*--gpus must be 1/);
    expect(() => describeSimEngine({ engine: 'vllm', model: 'TinyLlama-1.1B', gpu: 'A100', gpus: 1, ctxSize: 4096 })).toThrow(/ctx-size is llama.cpp's -c/);
  });

  it('reads a GGUF file for the model and its type', () => {
    const path = join(tmp, 'small-f16.gguf');
    const u32 = (v: number): GgufValue => ({ type: GgufType.UINT32, value: v });
    const md = new Map<string, GgufValue>([
      ['general.architecture', { type: GgufType.STRING, value: 'llama' }],
      ['llama.context_length', u32(2048)], ['llama.embedding_length', u32(64)], ['llama.block_count', u32(3)],
      ['llama.feed_forward_length', u32(176)], ['llama.attention.head_count', u32(4)], ['llama.attention.head_count_kv', u32(2)],
    ]);
    const t = (name: string, dims: number[], type = GgmlType.F16) => ({ name, dims, type, data: new Float32Array(dims.reduce((a, b) => a * b, 1)) });
    writeGguf(path, md, [t('token_embd.weight', [64, 300]), t('blk.0.attn_q.weight', [64, 64]), t('output.weight', [64, 300])]);
    const m = findModel(path);
    expect(m.impliedQuant).toBe('fp16');
    expect(m.spec).toMatchObject({ layers: 3, hidden: 64, heads: 4, kvHeads: 2, headDim: 16, ffn: 176, vocab: 300, maxModelLen: 2048, tiedEmbeddings: false });
  });

  /** Single-stream mean ITL of `predict` for one deployment (virtual time: deterministic). */
  async function itl(gpu: string, quant: string): Promise<number> {
    const r = await runCli(['predict', '--engine', 'llamacpp', '--gpu', gpu, '--model', 'Llama-3.2-1B', '--quant', quant,
      '--profile', 'synchronous', '--max-requests', '3', '--prompt-tokens', '128', '--output-tokens', '64', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { context: { gpu: string; quant: string }; stages: Array<{ metrics: { itlMs: { mean: number } } }> };
    expect(doc.context.quant).toBe(quant);
    return doc.stages[0]?.metrics.itlMs.mean as number;
  }

  it('predicts a single-stream decode step of weight bytes / memory bandwidth, plus the engine host time', async () => {
    // Compute made plentiful (1 PFLOP/s) so that only the memory side of the roofline is left.
    const slow = 'cpu:16c:50gbs:1000000gflops:64gib';
    const fast = 'cpu:16c:100gbs:1000000gflops:64gib';
    const [q4, q8, q4fast] = [await itl(slow, 'Q4_0'), await itl(slow, 'Q8_0'), await itl(fast, 'Q4_0')];
    const m = findModel('Llama-3.2-1B').spec;
    const d = deriveModel(m);
    const host = PRIORS.engines['llamacpp']!.c0Ms + PRIORS.engines['llamacpp']!.cSeqUs / 1000;
    // Fixed latencies per layer (step-cost.ts): 4 + 6 kernels at τ_k = 4 µs and one attention kernel at τ_a = 8 µs.
    const fixed = m.layers * (10 * 4 + 8) / 1000;
    // Every linear weight once per step, plus the LM head (hidden × vocab; tied to the embedding here), at the type's bytes.
    const weights = d.totalParams - d.embeddingParams - d.headParams + m.hidden * m.vocab;
    const etaM = 0.8; // the bandwidth efficiency of a device no calibration has fitted (step-cost.ts)
    const expected = (bw: number, q: 'Q4_0' | 'Q8_0'): number => (weights * QUANTS[q].bytesPerWeight) / (bw * 1e9 * etaM) * 1000 + host + fixed;
    // The rest of a step (KV reads of a ≤192-token context, norms, the FLOPs) adds at most a few percent.
    for (const [got, want] of [[q4, expected(50, 'Q4_0')], [q8, expected(50, 'Q8_0')], [q4fast, expected(100, 'Q4_0')]] as const) {
      expect(got).toBeGreaterThanOrEqual(want);
      expect(got).toBeLessThan(want * 1.03);
    }
    // Twice the bandwidth: half the memory time; 34/18 the bytes (Q8_0 against Q4_0): that much more of it.
    expect((q4 - host - fixed) / (q4fast - host - fixed)).toBeCloseTo(2, 1);
    expect((q8 - host - fixed) / (q4 - host - fixed)).toBeCloseTo(34 / 18, 1);
  });

  it('bad CPU spec: one line, exit 2, before anything runs', async () => {
    const r = await runCli(['predict', '--engine', 'llamacpp', '--gpu', 'cpu:8cores:60', '--model', 'TinyLlama-1.1B', '--quant', 'Q4_K_M']);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error: .*--gpu cpu:8cores:60: "8cores" is not a core count like 8c .*cpu:<cores>c:<GB\/s>/);
    expect(r.stdout).toBe('');
  });

  it('prints a table for predict --engine llamacpp --gpu <cpu> --model <small model> --quant Q4_K_M', async () => {
    const r = await runCli(['predict', '--engine', 'llamacpp', '--gpu', 'EPYC-9654', '--model', 'TinyLlama-1.1B', '--quant', 'Q4_K_M',
      '--parallel', '2', '--ctx-size', '2048', '--profile', 'concurrent', '--concurrency', '1,2', '--max-requests', '10', '--prompt-tokens', '256', '--output-tokens', '64']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/TinyLlama-1\.1B \(Q4_K_M\) · 1× EPYC-9654 · llama\.cpp server \(2 slots of 1024 tokens, -c 2048/);
    expect(r.stdout).toMatch(/\| concurrent@2 \|/);
    expect(r.stdout).toMatch(/EPYC-9654's efficiencies are priors/);
  });

  it('plan: a CPU is one device (no tensor-parallel shapes), GPUs keep theirs', () => {
    const axes = resolveAxes('TinyLlama-1.1B', { gpus: ['cpu:16c:80', 'L4'], quants: ['Q4_K_M'], engines: ['llamacpp'] });
    const shapes = enumerateShapes(axes).map((s) => `${s.gpus}× ${s.gpu}`);
    expect(shapes).toEqual(['1× cpu:16c:80gbs:1536gflops:64gib', '1× L4', '2× L4', '4× L4', '8× L4']);
  });

  it('sim: --parallel and --ctx-size reach the served engine', async () => {
    const server = await startSimServer({ engine: 'llamacpp', model: 'TinyLlama-1.1B', gpu: 'cpu:4c:40', gpus: 1, maxNumSeqs: 2, ctxSize: 2048, host: '127.0.0.1', port: 0, seed: 1 });
    try {
      expect([server.description.maxNumSeqs, server.description.kvTokens, server.description.maxModelLen]).toEqual([2, 2048, 1024]);
    } finally {
      await server.close();
    }
  });
});
