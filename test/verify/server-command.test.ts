import { describe, expect, it } from 'vitest';
import type { PlanCandidate } from '../../src/plan/types.js';
import { candidateName, checkTemplate, serverCommand } from '../../src/verify/server-command.js';

function candidate(engine: string, launch: string, over: Partial<PlanCandidate> = {}): PlanCandidate {
  return {
    gpu: 'H100', gpus: 2, quant: 'awq', engine, rank: 1, feasible: true, status: 'feasible', reason: null, gpuHourPrice: 2.49,
    capacityPerReplica: 8, replicas: 1, totalGpus: 2, costPerHour: 4.98, costPerMillionOutputTokens: 1, tokensPerSecondPerGpu: 1, tokensPerSecondPerUser: 1, joulesPerOutputToken: null, launch, ...over,
  };
}

describe('plan --verify server commands', () => {
  it('a template is filled with the candidate: engine, model, checkpoint, GPU, GPUs, quantization, name and port', () => {
    const c = candidate('vllm', 'vllm serve x');
    const cmd = serverCommand({ kind: 'template', template: 'serve {engine} {model} {checkpoint} {gpu} {gpus} {quant} {kvCacheDtype} {name} --port {port} ${HOME}' }, 'Qwen2-72B-Instruct', c, undefined, 8123);
    expect(cmd).toBe('serve vllm Qwen2-72B-Instruct Qwen/Qwen2-72B-Instruct-AWQ H100 2 awq auto 2x-H100-awq-vllm --port 8123 ${HOME}');
    expect(candidateName(c)).toBe('2x-H100-awq-vllm');
  });

  it('--server-cmd launch adds each engine\'s own port flag to the launch command the plan printed', () => {
    const port = (engine: string, launch: string): string => serverCommand({ kind: 'launch' }, 'Qwen2-72B-Instruct', candidate(engine, launch), undefined, 9001);
    expect(port('vllm', 'vllm serve Q --tensor-parallel-size 2')).toBe('vllm serve Q --tensor-parallel-size 2 --port 9001');
    expect(port('sglang', 'python -m sglang.launch_server --model-path Q --tp 2')).toBe('python -m sglang.launch_server --model-path Q --tp 2 --port 9001');
    expect(port('lmdeploy', 'lmdeploy serve api_server Q --tp 2')).toBe('lmdeploy serve api_server Q --tp 2 --server-port 9001');
    expect(port('tgi', 'docker run --gpus all --shm-size 1g -p 8080:80 ghcr.io/huggingface/text-generation-inference:3.0.1 --model-id Q')).toBe(
      'docker run --gpus all --shm-size 1g -p 9001:80 ghcr.io/huggingface/text-generation-inference:3.0.1 --model-id Q');
    expect(port('triton', "trtllm-serve Q --tp_size 2 --extra_llm_api_options kv-cache.yaml  # kv-cache.yaml holds 'kv_cache_config: {dtype: fp8}'")).toBe(
      'trtllm-serve Q --tp_size 2 --extra_llm_api_options kv-cache.yaml --port 9001');
    expect(port('llamacpp', 'llama-server -hf Q-GGUF:Q4_K_M --parallel 4 -c 16384')).toBe('llama-server -hf Q-GGUF:Q4_K_M --parallel 4 -c 16384 --port 9001');
  });

  it('--server-cmd sim starts this CLI as the candidate, with its KV-cache type and catalog files', () => {
    const cmd = serverCommand({ kind: 'sim', argv: ['/usr/bin/node', '/opt/my tools/inferbench.js'], catalogFiles: ['/c/models.json'], seed: 42 }, 'Qwen2-72B-Instruct', candidate('sglang', ''), 'fp8', 7000);
    expect(cmd).toBe("/usr/bin/node '/opt/my tools/inferbench.js' sim --engine sglang --model Qwen2-72B-Instruct --gpu H100 --gpus 2 --quant awq --kv-cache-dtype fp8 --catalog /c/models.json --seed 42 --port 7000");
    // A model named with its quantization keeps it (passing --quant again would be refused by the simulator).
    const implied = serverCommand({ kind: 'sim', argv: ['node', 'ib'], catalogFiles: [], seed: 1 }, 'Qwen2-72B-Instruct-AWQ', candidate('vllm', ''), undefined, 7001);
    expect(implied).toBe('node ib sim --engine vllm --model Qwen2-72B-Instruct-AWQ --gpu H100 --gpus 2 --seed 1 --port 7001');
  });

  it('a placeholder no candidate has is a usage error naming the ones there are', () => {
    expect(() => checkTemplate('serve --port {prot}')).toThrow(/unknown placeholder \{prot\}/);
    expect(() => checkTemplate('serve {model} --port {port}')).not.toThrow();
  });
});
