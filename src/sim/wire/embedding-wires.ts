import type { SimEngineKind } from './types.js';

/**
 * Wires whose engines serve /v1/embeddings in the sim. A module of its own so that option checks (config/) can read
 * it without loading embeddings.ts, whose prompt counting pulls in the o200k tokenizer (~0.5 s of CPU at start-up).
 */
export const EMBEDDING_WIRES = ['vllm', 'sglang', 'llamacpp'] as const satisfies readonly SimEngineKind[];
