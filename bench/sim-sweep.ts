// Timing of an 11-stage virtual sweep (synchronous, throughput, 9 Poisson rates) of 300 requests per stage.
import type { StageSpec } from '../src/load/types.js';
import { createVirtualStageRunner } from '../src/sim/index.js';
import type { Workload } from '../src/workload/types.js';

const wl: Workload = { description: '512/128', item: () => ({ prompt: '', promptTokens: 512, promptTokenSource: 'client-tokenizer', outputTokens: 128 }) };
for (const [engine, model, gpu, gpus] of [['vllm-v0', 'Qwen2-72B-Instruct', 'L20-48GB', 4], ['vllm', 'Llama-3-8B', 'H100', 1]] as const) {
  const r = createVirtualStageRunner({ engine, model, gpu, gpus });
  const stages: StageSpec[] = [
    { kind: 'closed', concurrency: 1, label: 'synchronous', limits: { maxRequests: 300 }, workload: wl },
    { kind: 'burst', label: 'throughput', limits: { maxRequests: 300 }, workload: wl },
    ...Array.from({ length: 9 }, (_, i): StageSpec => ({ kind: 'open', arrival: 'poisson', rate: 0.5 + i, label: `a${i}`, limits: { maxRequests: 300 }, workload: wl })),
  ];
  const t0 = performance.now();
  let n = 0;
  for (const [i, s] of stages.entries()) n += (await r.runStage(s, i, n)).records.length;
  console.log(`${engine} ${model} ${gpus}x${gpu}: 11 stages, ${n} requests in ${(performance.now() - t0).toFixed(0)} ms`);
}
