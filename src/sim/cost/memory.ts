import { deriveModel, kvBytesPerTokenPerGpu } from '../catalog/models.js';
import { QUANTS, embeddingBytes } from '../catalog/hardware.js';
import type { HardwareSpec, KvCacheDtype, ModelSpec, QuantName } from '../catalog/types.js';

export const BLOCK_TOKENS = 16;

export interface MemoryPlan {
  weightsGiBPerGpu: number;
  activationGiBPerGpu: number;
  kvBlocks: number;
  kvTokens: number;
  blockBytes: number;
}

/** KV capacity in 16-token blocks (research/simulator.md §3.5). kvBlocks may come out ≤ 0: the model does not fit. */
export function planMemory(
  model: ModelSpec, hw: HardwareSpec, tp: number, quant: QuantName,
  opts: { gpuMemoryUtilization: number; maxNumBatchedTokens: number; maxNumSeqs: number; kvCacheDtype?: KvCacheDtype; kvFreeFraction?: number },
): MemoryPlan {
  const d = deriveModel(model);
  const bw = QUANTS[quant].bytesPerWeight;
  const embHead = d.embeddingParams + d.headParams;
  const weights = ((d.totalParams - embHead) * bw) / tp + (embHead * embeddingBytes(quant)) / tp;
  const act = opts.maxNumBatchedTokens * (12 * model.hidden + (4 * d.ffnActive) / tp) * 2
    + (Math.min(opts.maxNumSeqs, 1024) * model.vocab * 4 * 2) / tp
    // fused-MoE workspaces: per routed token, the gate/up output, the activation and the down output
    + (model.moe ? opts.maxNumBatchedTokens * model.moe.activeExperts * ((3 * model.moe.expertFfn) / tp + model.hidden) * 2 : 0);
  const blockBytes = BLOCK_TOKENS * kvBytesPerTokenPerGpu(model, tp, opts.kvCacheDtype);
  const total = hw.memGiB * 2 ** 30 * 0.985;
  const kvBytes = opts.kvFreeFraction !== undefined
    ? (total - weights - act) * opts.kvFreeFraction
    : total * opts.gpuMemoryUtilization - weights - act;
  const kvBlocks = Math.floor(kvBytes / blockBytes);
  return {
    weightsGiBPerGpu: weights / 2 ** 30,
    activationGiBPerGpu: act / 2 ** 30,
    kvBlocks,
    kvTokens: Math.max(0, kvBlocks) * BLOCK_TOKENS,
    blockBytes,
  };
}
