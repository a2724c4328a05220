/**
 * The command that starts one replica of a planned deployment, in each engine's own flags. The checkpoint
 * name is the catalog's Hugging Face repository; quantized variants follow Qwen's naming (-AWQ, -GPTQ-Int4,
 * -GPTQ-Int8): other publishers name theirs differently, so substitute the checkpoint you use.
 */
import { isGgufQuant } from '../sim/catalog/gguf-quants.js';
import { findModel } from '../sim/catalog/registry.js';
import type { KvCacheDtype, QuantName } from '../sim/catalog/types.js';
import { kvCacheLaunchFlags } from './kv-cache-launch.js';
import type { SimEngineDescription } from '../sim/create.js';
import type { CandidateShape } from './types.js';

const QUANT_SUFFIX: Record<QuantName, string> = {
  fp16: '', bf16: '', awq: '-AWQ', 'gptq-int4': '-GPTQ-Int4', 'gptq-int8': '-GPTQ-Int8', fp8: '-FP8',
  // GGUF types are a file inside the repository (llama-server -hf REPO:TYPE), not a repository of their own.
  Q4_0: '', Q4_K_M: '', Q5_K_M: '', Q6_K: '', Q8_0: '', F32: '',
};

/** `Qwen/Qwen2-72B-Instruct-AWQ`: the catalog's HF repository (or the name as given) with the quantization suffix. */
export function checkpointName(model: string, quant: QuantName): string {
  const m = findModel(model);
  if (m.impliedQuant) return m.name;
  const repo = /^HF (\S+\/\S+)/.exec(m.spec.source ?? '')?.[1] ?? m.name;
  return `${repo}${QUANT_SUFFIX[quant]}`;
}

/** What a launch needs from the engine model: the batch limit and, when the KV cache is short, the context to start with. */
export type LaunchLimits = Pick<SimEngineDescription, 'maxNumSeqs' | 'maxModelLen' | 'kvTokens'> & { kvCacheDtype?: KvCacheDtype };

/**
 * The context to pass when the KV cache cannot hold the model's full one (vLLM refuses to start otherwise):
 * the KV capacity rounded down to 1,024 tokens. Undefined when the full context fits.
 */
export function startableContext(d: LaunchLimits): number | undefined {
  if (d.kvTokens >= d.maxModelLen) return undefined;
  return Math.max(1024, Math.floor(d.kvTokens / 1024) * 1024);
}

/** The engine's launch command, with the flags for the KV-cache type the candidate was modelled with. */
export function launchCommand(model: string, shape: CandidateShape, d: LaunchLimits): string {
  return join([engineLaunch(model, shape, d), kvCacheLaunchFlags(shape.engine, d.kvCacheDtype)]);
}

function engineLaunch(model: string, shape: CandidateShape, d: LaunchLimits): string {
  const ckpt = checkpointName(model, shape.quant);
  const q = shape.quant;
  const quantized = q !== 'fp16' && q !== 'bf16';
  const ctx = startableContext(d);
  switch (shape.engine) {
    case 'vllm':
    case 'vllm-v0':
    case 'vllm-legacy':
      return join(['vllm serve', ckpt, `--tensor-parallel-size ${shape.gpus}`, quantized && `--quantization ${q === 'awq' ? 'awq' : 'gptq'}`,
        `--max-num-seqs ${d.maxNumSeqs}`, ctx && `--max-model-len ${ctx}`]);
    case 'sglang':
      return join(['python -m sglang.launch_server --model-path', ckpt, `--tp ${shape.gpus}`, quantized && `--quantization ${q === 'awq' ? 'awq' : 'gptq'}`,
        `--max-running-requests ${d.maxNumSeqs}`, ctx && `--context-length ${ctx}`]);
    case 'lmdeploy':
      return join(['lmdeploy serve api_server', ckpt, `--tp ${shape.gpus}`, quantized && `--model-format ${q === 'awq' ? 'awq' : 'gptq'}`,
        `--max-batch-size ${d.maxNumSeqs}`, ctx && `--session-len ${ctx}`]);
    case 'tgi':
      return join(['docker run --gpus all --shm-size 1g -p 8080:80 ghcr.io/huggingface/text-generation-inference:3.0.1 --model-id', ckpt,
        `--num-shard ${shape.gpus}`, quantized && `--quantize ${q === 'awq' ? 'awq' : 'gptq'}`]);
    case 'triton':
    case 'trtllm':
      // trtllm-serve reads the Hugging Face checkpoint (quantized ones included) and builds the engine itself.
      return join(['trtllm-serve', ckpt, `--tp_size ${shape.gpus}`, `--max_batch_size ${d.maxNumSeqs}`, ctx && `--max_seq_len ${ctx}`]);
    case 'mlc-llm':
      return join(['mlc_llm serve', `HF://mlc-ai/${ckpt.split('/').pop()}-MLC`, `--overrides "tensor_parallel_shards=${shape.gpus};max_num_sequence=${d.maxNumSeqs}"`]);
    case 'llamacpp':
    case 'ollama':
      return join([shape.engine === 'ollama' ? 'OLLAMA_NUM_PARALLEL=4 ollama serve  # then: ollama pull' : 'llama-server -hf', `${ckpt}-GGUF${isGgufQuant(q) ? `:${q}` : ''}`,
        // -c is split over the slots: each slot gets the context the candidate was modelled with, within the KV cache.
        shape.engine === 'llamacpp' && `--parallel ${d.maxNumSeqs} -c ${Math.min(d.kvTokens, d.maxModelLen * d.maxNumSeqs)}`]);
    default:
      return `${shape.engine}: serve ${ckpt} on ${shape.gpus}× ${shape.gpu}`;
  }
}

function join(parts: ReadonlyArray<string | false | number | undefined>): string {
  return parts.filter((p): p is string => typeof p === 'string' && p !== '').join(' ');
}
