import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InferbenchError } from '../../src/core/errors.js';
import {
  deriveModel, findHardware, findModel, kvBytesPerTokenPerGpu, listModels, loadCatalogFile, planMemory,
  describeSimEngine,
} from '../../src/sim/index.js';

describe('catalog', () => {
  it('finds models case-insensitively and reads the quantization from the name', () => {
    expect(findModel('qwen2-72b-instruct').spec.layers).toBe(80);
    expect(findModel('Qwen/Qwen2-7B-Instruct').spec.hidden).toBe(3584);
    const awq = findModel('Qwen2-72B-Instruct-AWQ');
    expect(awq.impliedQuant).toBe('awq');
    expect(awq.name).toBe('Qwen2-72B-Instruct-AWQ');
    expect(findModel('Qwen2-72B-Instruct-GPTQ-Int8').impliedQuant).toBe('gptq-int8');
    expect(findModel('Mistral-7B-OpenOrca-AWQ').spec.kvHeads).toBe(8);
    expect(findModel('meta-llama-3.1-70b-instruct').spec.maxModelLen).toBe(131072);
    expect(findHardware('A100 40G').name).toBe('A100-40GB');
    expect(findHardware('l20 48gb').name).toBe('L20-48GB');
    expect(findHardware('h100-sxm5-80gb').bwGBs).toBe(3350);
  });

  it('derives parameter counts that match the published sizes', () => {
    expect(deriveModel(findModel('Qwen-14B').spec).totalParams / 1e9).toBeCloseTo(14.17, 1);
    expect(deriveModel(findModel('Qwen2-57B-A14B').spec).totalParams / 1e9).toBeCloseTo(57.4, 0);
    expect(deriveModel(findModel('Llama-2-70B').spec).totalParams / 1e9).toBeCloseTo(68.98, 0);
    expect(kvBytesPerTokenPerGpu(findModel('Qwen-14B').spec, 1)).toBe(819200);
    // KV heads are replicated when TP exceeds them.
    expect(kvBytesPerTokenPerGpu(findModel('chatglm3-6b').spec, 4)).toBe(28 * 2 * 1 * 128 * 2);
  });

  it('rejects unknown names with a config error that lists the known ones', () => {
    try {
      findModel('gpt-17');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(InferbenchError);
      expect((err as InferbenchError).code).toBe('E_CONFIG');
      expect((err as InferbenchError).hint).toContain('Qwen2-7B-Instruct');
    }
    expect(() => findHardware('TPU-v9')).toThrow(/unknown GPU/);
    expect(() => describeSimEngine({ engine: 'nope', model: 'x', gpu: 'y', gpus: 9 })).toThrow(/unknown engine.*unknown model.*unknown GPU.*gpus/s);
  });

  it('sizes the KV cache from memory, weights and activations', () => {
    const m = planMemory(findModel('Qwen-14B').spec, findHardware('A100-40GB'), 1, 'fp16', {
      gpuMemoryUtilization: 0.9, maxNumBatchedTokens: 2048, maxNumSeqs: 256,
    });
    expect(m.kvTokens).toBeGreaterThan(9000);
    expect(m.kvTokens).toBeLessThan(12000);
    expect(() => describeSimEngine({ engine: 'vllm', model: 'Llama-2-70B', gpu: 'A100-40GB', gpus: 1 })).toThrow(/does not fit/);
  });

  it('imports a Hugging Face config.json (llama and qwen2_moe), naming it from the folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ib-cat-'));
    mkdirSync(join(dir, 'My-Llama-1B'));
    const llama = join(dir, 'My-Llama-1B', 'config.json');
    writeFileSync(llama, JSON.stringify({
      architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 2048, intermediate_size: 8192,
      num_hidden_layers: 16, num_attention_heads: 32, num_key_value_heads: 8, vocab_size: 128256,
      max_position_embeddings: 131072, tie_word_embeddings: true,
    }));
    const got = loadCatalogFile(llama);
    expect(got.models[0]?.name).toBe('My-Llama-1B');
    expect(findModel('my-llama-1b').spec.headDim).toBe(64);
    expect(listModels()).toContain('My-Llama-1B');
    const moe = join(dir, 'moe.json');
    writeFileSync(moe, JSON.stringify({
      _name_or_path: 'Org/Tiny-MoE', model_type: 'qwen2_moe', hidden_size: 1024, intermediate_size: 4096,
      moe_intermediate_size: 512, shared_expert_intermediate_size: 2048, num_experts: 16, num_experts_per_tok: 4,
      num_hidden_layers: 8, num_attention_heads: 16, num_key_value_heads: 4, vocab_size: 32000, max_position_embeddings: 8192,
    }));
    loadCatalogFile(moe);
    const spec = findModel('Tiny-MoE').spec;
    expect(spec.moe).toEqual({ experts: 16, activeExperts: 4, expertFfn: 512, sharedExpertFfn: 2048 });
    const own = join(dir, 'own.json');
    writeFileSync(own, JSON.stringify({ hardware: { 'MI-Test': { tflops: 500, memGiB: 64, bwGBs: 2000, link: 'pcie' } } }));
    loadCatalogFile(own);
    expect(describeSimEngine({ engine: 'vllm', model: 'Tiny-MoE', gpu: 'mi-test', gpus: 1 }).kvBlocks).toBeGreaterThan(0);
    writeFileSync(own, '{"models": {"bad": {"layers": 0}}}');
    expect(() => loadCatalogFile(own)).toThrow(/invalid or missing/);
  });
});
