import type { Workload } from '../../src/workload/types.js';

export const fixedWorkload = (prompt: number, output: number): Workload => ({
  description: `fixed ${prompt}/${output}`,
  item: () => ({ prompt: '', promptTokens: prompt, promptTokenSource: 'client-tokenizer', outputTokens: output }),
});
