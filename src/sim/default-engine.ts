/** What `sim`, `predict` and `run` without --target simulate when not told otherwise. */
export const DEFAULT_SIM = { engine: 'vllm', model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1 } as const;
