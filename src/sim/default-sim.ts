/** What the built-in simulator models when no flag says otherwise (issue: the default target). */
export const DEFAULT_SIM = { engine: 'vllm', model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1 } as const;
