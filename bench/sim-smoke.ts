import { createVirtualStageRunner } from '../src/sim/index.js';
import type { StageSpec } from '../src/load/types.js';
import type { Workload } from '../src/workload/types.js';

const wl = (p: number, o: number): Workload => ({
  description: `${p}/${o}`,
  item: () => ({ prompt: '', promptTokens: p, promptTokenSource: 'client-tokenizer', outputTokens: o }),
});
const [engine = 'vllm-0.2', model = 'chatglm3-6b', gpu = 'A100-40GB', gpus = '1'] = process.argv.slice(2);
const r = createVirtualStageRunner({ engine, model, gpu, gpus: Number(gpus) });
console.log(r.description);
for (const [p, o] of [[128, 128], [512, 512], [2048, 128]] as const) {
  const sync: StageSpec = { kind: 'closed', concurrency: 1, label: 'sync', limits: { maxRequests: 3 }, workload: wl(p, o) };
  const burst: StageSpec = { kind: 'burst', label: 'burst', limits: { maxRequests: 1000 }, workload: wl(p, o) };
  const t = performance.now();
  const a = await r.runStage(sync, 0, 0);
  const b = await r.runStage(burst, 1, 10);
  const ms = performance.now() - t;
  const rec = a.records[1]!;
  const dur = (b.endedAtMs - b.startedAtMs) / 1000;
  console.log(`${p}/${o}: sync ttft ${rec.ttftMs?.toFixed(1)} itl ${rec.itlMs?.toFixed(2)} perOut ${rec.latencyPerOutputTokenMs?.toFixed(2)} | burst ${(1000 / dur).toFixed(2)} req/s preempt ${r.lastStats()?.preemptionsTotal} steps ${r.lastStats()?.stepsTotal} (${ms.toFixed(0)} ms cpu)`);
}
