/**
 * Soak: many requests at a steady rate against `inferbench sim` in its own process, watching the
 * client's memory and the run folder's disk use. Run: npm run bench:soak [-- --requests=12000 --rate=200
 * --records=full|no-gaps|sample:0.1|none --minutes=M]. Bounded by count and time; loopback only.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getDialect } from '../src/dialects/index.js';
import { runBenchmark } from '../src/load/benchmark.js';
import { createHttpStageRunner } from '../src/load/http-runner.js';
import { parseRecordPolicy } from '../src/store/record-policy.js';
import { RunWriter } from '../src/store/run-writer.js';
import { HttpTarget } from '../src/transport/http.js';
import { createWorkload } from '../src/workload/create.js';
import { loadApproxTokenizer } from '../src/workload/tokenizer.js';
import { startSimChild } from './_sim-child.js';

const arg = (name: string, fallback: string): string =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const minutes = Number(arg('minutes', '0'));
const rate = Number(arg('rate', '200'));
const requests = minutes > 0 ? Math.round(rate * minutes * 60) : Number(arg('requests', '12000'));
const policy = parseRecordPolicy(arg('records', 'full'));

const sim = await startSimChild(['--engine', 'vllm', '--model', 'Llama-3-8B', '--gpu', 'H100', '--max-num-seqs', '2048']);
const dir = mkdtempSync(join(tmpdir(), 'inferbench-soak-'));
const writer = new RunWriter(dir, policy);
const tokenizer = await loadApproxTokenizer();
const target = new HttpTarget({ baseUrl: sim.url, connections: 4096 });
const samples: Array<{ t: number; done: number; rssMb: number; heapMb: number }> = [];
let done = 0;
const t0 = performance.now();
const mb = (b: number): number => b / 1048576;
const timer = setInterval(() => {
  const m = process.memoryUsage();
  samples.push({ t: (performance.now() - t0) / 1000, done, rssMb: mb(m.rss), heapMb: mb(m.heapUsed) });
}, 1000);

const runner = createHttpStageRunner({
  target, dialect: getDialect('openai-completions'), model: 'Llama-3-8B', forceLength: true, stream: true, tokenizer, seed: 1,
  onRecord: (r) => {
    done++;
    writer.appendRecord(r);
  },
});
const result = await runBenchmark(
  {
    profile: 'constant',
    rates: [rate],
    limits: { maxRequests: requests, maxSeconds: requests / rate + 60 },
    // 100 distinct prompts, reused: the soak is about the client, not about building prompts.
    workload: ((w) => ({ ...w, item: (i: number) => w.item(i % 100) }))(
      await createWorkload({ kind: 'synthetic', prompt: { kind: 'fixed', value: 256 }, output: { kind: 'fixed', value: 64 } }, { tokenizer, seed: 1 }),
    ),
  },
  runner,
);
clearInterval(timer);
await writer.close();
const disk = statSync(join(dir, 'requests.jsonl')).size;
const row = result.stages[0]!;
await target.close();
await sim.close();
rmSync(dir, { recursive: true, force: true });

// Growth after warm-up: RSS at the 20% mark vs the end, per 1,000 requests in between.
const warm = samples.find((s) => s.done >= requests * 0.2) ?? samples[0]!;
const last = samples[samples.length - 1]!;
const peak = Math.max(...samples.map((s) => s.rssMb));
const per1k = last.done > warm.done ? ((last.rssMb - warm.rssMb) / (last.done - warm.done)) * 1000 : 0;
console.log(`soak: ${row.requests.ok} ok, ${row.requests.errors} failed, ${row.requests.incomplete} cut of ${requests} requests at ${rate} req/s over ${last.t.toFixed(0)} s (records: ${arg('records', 'full')})`);
console.log('| at (s) | requests done | RSS MB | heap MB |');
console.log('|---|---|---|---|');
const step = Math.max(1, Math.floor(samples.length / 10));
for (let i = 0; i < samples.length; i += step) {
  const s = samples[i]!;
  console.log(`| ${s.t.toFixed(0)} | ${s.done} | ${s.rssMb.toFixed(1)} | ${s.heapMb.toFixed(1)} |`);
}
console.log(`| ${last.t.toFixed(0)} | ${last.done} | ${last.rssMb.toFixed(1)} | ${last.heapMb.toFixed(1)} |`);
console.log(`RSS after warm-up ${warm.rssMb.toFixed(1)} MB → end ${last.rssMb.toFixed(1)} MB (peak ${peak.toFixed(1)} MB): ${per1k.toFixed(3)} MB per 1,000 requests`);
console.log(`requests.jsonl: ${(disk / 1048576).toFixed(1)} MB (${requests > 0 ? (disk / requests).toFixed(0) : 0} bytes per request)`);
console.log(`achieved ${row.requestThroughput.toFixed(1)} req/s, TTFT p50 ${row.metrics.ttftMs?.median.toFixed(1)} ms, dispatch lag p99 ${row.metrics.timerLagMs?.p99.toFixed(2)} ms`);
