import { describe, expect, it } from 'vitest';
import { checkpointName, launchCommand, startableContext } from '../../src/plan/launch.js';

const limits = { maxNumSeqs: 256, maxModelLen: 32768, kvTokens: 400_000 };

describe('engine launch commands', () => {
  it('names the checkpoint from the catalog, quantized variants by suffix', () => {
    expect(checkpointName('Qwen2-72B-Instruct', 'fp16')).toBe('Qwen/Qwen2-72B-Instruct');
    expect(checkpointName('Qwen2-72B-Instruct', 'awq')).toBe('Qwen/Qwen2-72B-Instruct-AWQ');
    expect(checkpointName('Qwen2-72B-Instruct', 'gptq-int8')).toBe('Qwen/Qwen2-72B-Instruct-GPTQ-Int8');
    expect(checkpointName('Qwen2-72B-Instruct-GPTQ-Int4', 'gptq-int4')).toBe('Qwen2-72B-Instruct-GPTQ-Int4');
  });

  it("speaks each engine's flags for TP, quantization and batch size", () => {
    const shape = { gpu: 'H100', gpus: 4, quant: 'awq' as const };
    expect(launchCommand('Qwen2-72B-Instruct', { ...shape, engine: 'vllm' }, limits)).toBe(
      'vllm serve Qwen/Qwen2-72B-Instruct-AWQ --tensor-parallel-size 4 --quantization awq --max-num-seqs 256',
    );
    expect(launchCommand('Qwen2-72B-Instruct', { ...shape, engine: 'sglang' }, limits)).toBe(
      'python -m sglang.launch_server --model-path Qwen/Qwen2-72B-Instruct-AWQ --tp 4 --quantization awq --max-running-requests 256',
    );
    expect(launchCommand('Qwen2-72B-Instruct', { ...shape, engine: 'lmdeploy', quant: 'gptq-int4' }, limits)).toBe(
      'lmdeploy serve api_server Qwen/Qwen2-72B-Instruct-GPTQ-Int4 --tp 4 --model-format gptq --max-batch-size 256',
    );
    expect(launchCommand('Qwen2-72B-Instruct', { ...shape, engine: 'tgi' }, limits)).toMatch(
      /^docker run .*text-generation-inference:\S+ --model-id Qwen\/Qwen2-72B-Instruct-AWQ --num-shard 4 --quantize awq$/,
    );
    expect(launchCommand('Qwen2-72B-Instruct', { ...shape, engine: 'triton', quant: 'fp16' }, limits)).toBe(
      'trtllm-serve Qwen/Qwen2-72B-Instruct --tp_size 4 --max_batch_size 256',
    );
    expect(launchCommand('Qwen2-72B-Instruct', { ...shape, engine: 'vllm', quant: 'fp16' }, limits)).not.toMatch(/--quantization/);
  });

  it('caps the context where the KV cache cannot hold the whole one (vLLM would refuse to start)', () => {
    const short = { maxNumSeqs: 256, maxModelLen: 32768, kvTokens: 6500 };
    expect(startableContext(short)).toBe(6144);
    expect(startableContext(limits)).toBeUndefined();
    expect(launchCommand('Qwen2-72B-Instruct', { gpu: 'L40S', gpus: 1, quant: 'awq', engine: 'vllm' }, short)).toMatch(/--max-model-len 6144$/);
    expect(launchCommand('Qwen2-72B-Instruct', { gpu: 'L40S', gpus: 1, quant: 'awq', engine: 'sglang' }, short)).toMatch(/--context-length 6144$/);
  });
});
