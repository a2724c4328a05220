/**
 * Emission jitter of the sim server: token write time (bytes handed to the kernel) − planned time,
 * at 100 and 1,000 concurrent streams, with the client in a child process (the other core).
 * Also: event-loop delay, per-step write-pass spread, max streams served, tokens/s per core.
 *
 *   npx tsx bench/sim-jitter.ts [--quick]
 */
import { fork } from 'node:child_process';
import { Agent, request } from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { startSimServer, type SimServer } from '../src/sim/server/index.js';

interface ClientResult {
  ok: number;
  failed: number;
  bytes: number;
}

/** Child: open `n` streams at once against `url`, read each to the end. */
async function client(url: string, n: number, maxTokens: number): Promise<ClientResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const body = JSON.stringify({ prompt: 'Hello world', max_tokens: maxTokens, ignore_eos: true, stream: true });
  let ok = 0;
  let failed = 0;
  let bytes = 0;
  await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<void>((resolve) => {
          const req = request(url + '/v1/completions', { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
            res.on('data', (c: Buffer) => (bytes += c.length));
            res.on('end', () => {
              if (res.statusCode === 200) ok++;
              else failed++;
              resolve();
            });
            res.on('error', () => {
              failed++;
              resolve();
            });
          });
          req.on('error', () => {
            failed++;
            resolve();
          });
          req.end(body);
        }),
    ),
  );
  agent.destroy();
  return { ok, failed, bytes };
}

function runChild(url: string, n: number, maxTokens: number): Promise<ClientResult> {
  return new Promise((resolve, reject) => {
    const child = fork(process.argv[1] as string, ['--client', url, String(n), String(maxTokens)], { execArgv: process.execArgv });
    child.once('message', (m) => resolve(m as ClientResult));
    child.once('error', reject);
  });
}

function q(sorted: Float64Array, p: number): number {
  return sorted.length ? (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0) : 0;
}

interface Row {
  streams: number;
  scale: number;
  tokens: number;
  p50: number;
  p99: number;
  max: number;
  passP99: number;
  loopP99: number;
  loopMax: number;
  tokPerS: number;
  cpuPct: number;
  ok: number;
  failed: number;
}

async function measure(streams: number, maxTokens: number, scale: number): Promise<Row> {
  const server: SimServer = await startSimServer({
    engine: 'vllm', model: 'Llama-3.1-8B', gpu: 'H100', gpus: 1, seed: 1, modelTimeScale: scale, maxNumSeqs: Math.max(256, streams),
    truthLimits: { maxRequests: streams + 400, maxTokens: streams * maxTokens + 200 * 32 + 10 },
  });
  // warm-up on the same server (JIT, first-use initialisation), excluded from the figures
  await runChild(server.url, Math.min(streams, 200), 32);
  const skip = server.truth.finished().length;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const res = await runChild(server.url, streams, maxTokens);
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  loop.disable();
  const recs = server.truth.finished().slice(skip);
  const late: number[] = [];
  const groups = new Map<number, [number, number]>();
  let tokens = 0;
  for (const r of recs) {
    for (let i = 0; i < r.writtenMs.length; i++) {
      const w = r.writtenMs[i] as number;
      const p = r.plannedMs[i] as number;
      late.push(w - p);
      tokens++;
      const g = groups.get(p);
      if (g) {
        if (w < g[0]) g[0] = w;
        if (w > g[1]) g[1] = w;
      } else groups.set(p, [w, w]);
    }
  }
  const sorted = Float64Array.from(late).sort();
  const spread = Float64Array.from([...groups.values()].map(([a, b]) => b - a)).sort();
  await server.close();
  return {
    streams, scale, tokens, p50: q(sorted, 0.5), p99: q(sorted, 0.99), max: sorted[sorted.length - 1] ?? 0, passP99: q(spread, 0.99),
    loopP99: loop.percentile(99) / 1e6, loopMax: loop.max / 1e6, tokPerS: tokens / (wall / 1000), cpuPct: ((cpu.user + cpu.system) / 1000 / wall) * 100,
    ok: res.ok, failed: res.failed,
  };
}

function table(rows: Row[]): string {
  const head = ['streams', 'time scale', 'tokens', 'jitter p50 ms', 'p99 ms', 'max ms', 'step pass p99 ms', 'loop delay p99 ms', 'loop max ms', 'tokens/s', 'server CPU %', 'ok/failed'];
  const lines = rows.map((r) => [
    String(r.streams), String(r.scale), String(r.tokens), r.p50.toFixed(3), r.p99.toFixed(3), r.max.toFixed(3), r.passP99.toFixed(3), r.loopP99.toFixed(2), r.loopMax.toFixed(2),
    r.tokPerS.toFixed(0), r.cpuPct.toFixed(0), `${r.ok}/${r.failed}`,
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const fmt = (cells: string[]): string => '| ' + cells.map((c, i) => c.padStart(w[i] ?? 0)).join(' | ') + ' |';
  return [fmt(head), '|' + w.map((n) => '-'.repeat(n + 2)).join('|') + '|', ...lines.map(fmt)].join('\n');
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const rows: Row[] = [];
  const plan: Array<[number, number, number]> = quick
    ? [[100, 64, 1], [1000, 64, 1]]
    : [[100, 256, 1], [1000, 256, 1], [2000, 128, 1], [4000, 64, 1], [1000, 256, 0]];
  for (const [streams, maxTokens, scale] of plan) {
    const row = await measure(streams, maxTokens, scale);
    rows.push(row);
    process.stderr.write(`done ${streams} streams × ${maxTokens} tokens at time scale ${scale}\n`);
  }
  console.log(table(rows));
  console.log('\njitter = write time (bytes handed to the kernel) − planned time, all tokens; step pass = spread of write times among tokens planned for the same instant; time scale 0 = infinitely fast engine (throughput ceiling).');
}

if (process.argv[2] === '--client') {
  const [url, n, maxTokens] = process.argv.slice(3);
  const r = await client(url as string, Number(n), Number(maxTokens));
  process.send?.(r, () => process.exit(0));
} else {
  await main();
}
