/**
 * How close `run --profile capacity` comes to a known capacity, and to `predict --profile capacity` of the same
 * simulated engine — the timing-dependent comparisons that used to be test bounds (±10%), which a busy machine broke.
 * Run: npx tsx bench/capacity-known.ts [-- --runs=N] [-- --only=slots,hard,sim]. Loopback only, bounded (each search
 * stops by itself; one run takes 30–150 s). Prints a table; the summaries go to bench/out/capacity-known.json.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CapacityResult } from '../src/load/capacity-types.js';
import { startSimServer } from '../src/sim/server/index.js';
import { runCli } from '../test/helpers/cli.js';
import { startHardCapacityServer } from '../test/helpers/hard-capacity-server.js';
import { startSlotServer } from '../test/helpers/slot-server.js';

const arg = (name: string, fallback: string): string => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const runs = Number(arg('runs', '1'));
const only = new Set(arg('only', 'slots,hard,sim').split(','));

interface Row {
  case: string;
  truth: string;
  found: string;
  apart: string;
  probes: number;
  wallS: number;
  settled: boolean;
  reproducibility: string;
}
const rows: Row[] = [];
const kept: Array<{ case: string; capacity: CapacityResult | null }> = [];
const tmp = mkdtempSync(join(tmpdir(), 'ib-capacity-bench-'));
const pct = (a: number, b: number): string => `${(((a - b) / b) * 100).toFixed(1)}%`;

async function search(name: string, args: string[], truth: number | null, truthText: string): Promise<CapacityResult | null> {
  const out = join(tmp, `${name.replace(/\W+/g, '-')}-${rows.length}`);
  const t = performance.now();
  const r = await runCli([...args, '--out', out, '--no-progress'], { timeoutMs: 600_000 });
  const wallS = (performance.now() - t) / 1000;
  let c: CapacityResult | null = null;
  try {
    c = (JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { capacity: CapacityResult }).capacity;
  } catch {
    console.error(`${name}: no summary (exit ${r.code}): ${r.stderr.split('\n')[0] ?? ''}`);
  }
  const found = c?.feasibleMax ?? null;
  rows.push({
    case: name,
    truth: truthText,
    found: found === null ? 'none' : `${found.toFixed(2)} (first failure ${c?.firstBreach?.toFixed(2) ?? '—'})`,
    apart: found !== null && truth !== null ? pct(found, truth) : '—',
    probes: c?.probes.length ?? 0,
    wallS,
    settled: c?.settled ?? true,
    reproducibility: c?.reproducibility?.text.replace(/^reproducibility: /, '') ?? 'no load run twice',
  });
  kept.push({ case: name, capacity: c });
  return c;
}

const lengths = ['--output-tokens', '16', '--prompt-tokens', '64', '--tokenizer', 'approx'];
for (let i = 0; i < runs; i++) {
  if (only.has('slots')) {
    // docs/capacity.md's table: 8 slots, 10 ms + 15 × 25 ms, FIFO queue.
    const s = await startSlotServer({ slots: 8, prefillMs: 10, tokenMs: 25, metrics: true, cacheKeyChars: 1_000_000 });
    await search('slot server 8 × 385 ms, ttft:200', ['run', '--target', s.url, '--profile', 'capacity', '--slo', 'ttft:200', '--seed', String(i + 1), ...lengths], 8 / 0.385, '20.78 req/s');
    await s.close();
  }
  if (only.has('hard')) {
    // test/run/capacity-run.test.ts's server: 4 slots, 5 ms + 7 × 20 ms, a 1-s wait past capacity.
    const h = await startHardCapacityServer({ slots: 4, prefillMs: 5, tokenMs: 20, overflowMs: 1000 });
    await search('hard 4 × 145 ms, ttft:300', ['run', '--target', h.url, '--profile', 'capacity', '--slo', 'ttft:300', '--seed', String(i + 1), '--output-tokens', '8', '--prompt-tokens', '32', '--tokenizer', 'approx', '--max-seconds', '1'], 4 / 0.145, '27.59 req/s');
    await h.close();
  }
  if (only.has('sim')) {
    // test/run/capacity-sim.test.ts's configuration: the prediction is the truth the measurement is held to.
    const cfg = ['--prompt-tokens', '128', '--output-tokens', '32', '--max-seconds', '1', '--profile', 'capacity', '--slo', 'ttft:200'];
    const p = await search('predict (virtual time)', ['predict', '--engine', 'vllm', '--model', 'Qwen2-7B-Instruct', '--gpu', 'A100-80GB', ...cfg], null, '—');
    const sim = await startSimServer({ engine: 'vllm', model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1, seed: i + 1 });
    await search('run vs inferbench sim', ['run', '--target', sim.url, '--tokenizer', 'approx', '--seed', String(i + 1), ...cfg], p?.feasibleMax ?? null, p?.feasibleMax ? `${p.feasibleMax.toFixed(2)} req/s (predicted)` : '—');
    await sim.close();
  }
}

console.log(`capacity searches on ${cpus().length} cores, load average ${loadavg().map((x) => x.toFixed(1)).join(' ')} at the end`);
console.log('| case | truth | found (req/s) | apart | probes | wall s | settled | reproducibility |');
console.log('|---|---|---|---|---:|---:|---|---|');
for (const r of rows) console.log(`| ${r.case} | ${r.truth} | ${r.found} | ${r.apart} | ${r.probes} | ${r.wallS.toFixed(0)} | ${r.settled ? 'yes' : 'NO'} | ${r.reproducibility} |`);
mkdirSync('bench/out', { recursive: true });
writeFileSync('bench/out/capacity-known.json', JSON.stringify({ rows, capacities: kept }, null, 2));
rmSync(tmp, { recursive: true, force: true });
