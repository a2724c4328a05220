import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findHardware, findModel, findQuant } from '../src/sim/catalog/registry.js';
import { describeSimEngine } from '../src/sim/create.js';
import { findEngineProfile } from '../src/sim/engine/profiles.js';
import {
  type CorpusRow, corpusEngine, corpusGpu, corpusGpuWording, corpusModelName, corpusQuant, corpusTableId,
} from '../src/sim/calibrate/corpus-names.js';

const rows = JSON.parse(readFileSync(new URL('../data/public-tables/public-tables.json', import.meta.url), 'utf8')) as CorpusRow[];

describe('the public tables resolve in the built-in catalog (no catalog file)', () => {
  it('has the 974 rows of 15 tables', () => {
    expect(rows).toHaveLength(974);
    expect(new Set(rows.map(corpusTableId)).size).toBe(15);
  });

  it('every model, GPU, engine and quantization named in the file resolves', () => {
    const failures: string[] = [];
    for (const r of rows) {
      const tryIt = (what: string, f: () => unknown): void => {
        try {
          f();
        } catch (err) {
          failures.push(`row ${r.id} ${what}: ${(err as Error).message}`);
        }
      };
      tryIt('model', () => findModel(corpusModelName(r)));
      tryIt('gpu', () => findHardware(corpusGpu(r)));
      tryIt('gpu wording', () => findHardware(corpusGpuWording(r)));
      tryIt('engine', () => findEngineProfile(corpusEngine(r)));
      tryIt('quant', () => findQuant(corpusQuant(r).quant));
    }
    expect(failures).toEqual([]);
  });

  it('every distinct configuration of the file builds a simulated engine', () => {
    const seen = new Set<string>();
    const failures: string[] = [];
    for (const r of rows) {
      const { quant, kvCacheDtype } = corpusQuant(r);
      const opts = { engine: corpusEngine(r), model: corpusModelName(r), gpu: corpusGpu(r), gpus: r.tp, quant, kvCacheDtype };
      const key = JSON.stringify(opts);
      if (seen.has(key)) continue;
      seen.add(key);
      const len = (r.inputTokens ?? 0) + (r.outputTokens ?? 0);
      try {
        const d = describeSimEngine({ ...opts, maxModelLen: Math.max(len, 4096), ...(opts.engine === 'trtllm' ? { gpuMemoryUtilization: 0.95 } : {}) });
        expect(d.kvTokens).toBeGreaterThan(0);
      } catch (err) {
        failures.push(`row ${r.id} ${key}: ${(err as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('names as people write them: with or without the org, -Instruct, quantization suffixes', () => {
    expect(findModel('Qwen/Qwen3-14B').spec.name).toBe('Qwen3-14B');
    expect(findModel('Qwen3-14B-FP8').impliedQuant).toBe('fp8');
    expect(findModel('Qwen/Qwen3-30B-A3B-GPTQ-Int4')).toMatchObject({ impliedQuant: 'gptq-int4', spec: { name: 'Qwen3-30B-A3B' } });
    expect(findModel('Qwen2.5-72B-Instruct-AWQ').impliedQuant).toBe('awq');
    expect(findModel('mistralai/Mixtral-8x7B-Instruct-v0.1').spec.moe?.experts).toBe(8);
    expect(findModel('nvidia/Llama-3.1-405B-Instruct-FP8').spec.layers).toBe(126);
    expect(findModel('google/gemma-3-27b-it').spec.name).toBe('Gemma-3-27B');
    expect(findModel('deepseek-ai/DeepSeek-V2-Lite-Chat').spec.kvLatentDim).toBe(576);
    for (const g of ['H100 PCIe', 'H200', 'GH200', 'H20', 'L40S', 'L20', 'A100-40GB', 'A100 80GB', 'A10', 'RTX 3090', 'RTX 4090']) {
      expect(() => findHardware(g)).not.toThrow();
    }
    // NVIDIA's ModelOpt FP8 checkpoints keep the KV cache in FP8 too (kv_cache_quant_algo), other FP8 ones do not.
    expect(findModel('nvidia/Llama-3.1-8B-Instruct-FP8').impliedKvCacheDtype).toBe('fp8');
    expect(findModel('neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8').impliedKvCacheDtype).toBeUndefined();
    const kv = (model: string, kvCacheDtype?: string) => describeSimEngine({ engine: 'trtllm', model, gpu: 'H100', gpus: 1, ...(kvCacheDtype ? { kvCacheDtype } : {}) });
    expect(kv('nvidia/Llama-3.1-8B-Instruct-FP8').kvCacheDtype).toBe('fp8');
    expect(kv('nvidia/Llama-3.1-8B-Instruct-FP8', 'auto').kvCacheDtype).toBe('auto');
    expect(kv('nvidia/Llama-3.1-8B-Instruct-FP8').kvTokens).toBeGreaterThan(1.9 * kv('neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8').kvTokens);
    expect(() => findModel('Qwen9-1T')).toThrow(expect.objectContaining({ hint: expect.stringMatching(/known models: .*Qwen3-235B-A22B/) }));
  });
});
