/**
 * What the dashboard's live feed costs a run: the same short runs against the built-in simulator, alternately
 * into a folder a dashboard serves (the run feeds it; a page-like SSE client listens) and into one it does not.
 * Reports the runs' own client health (event-loop delay p99, dispatch lag p99, client CPU) for each.
 *
 *   npx tsx bench/ui-feed.ts [-- --pairs=N] [-- --rate=R] [-- --seconds=S]
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, machine, table } from './_stats.js';

const arg = (name: string, fallback: number): number => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const PAIRS = arg('pairs', 5);
const RATE = arg('rate', 60);
const SECONDS = arg('seconds', 5);

function cli(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: 'true' } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => resolve({ code, out }));
  });
}

interface Health {
  eventLoopDelayP99Ms: number;
  dispatchLagP99Ms: number;
  clientCpuShare: number;
}

async function run(dir: string): Promise<Health> {
  const r = await cli([
    'run', '--out', dir, '--profile', 'constant', '--rate', String(RATE), '--max-seconds', String(SECONDS), '--prompt-tokens', '128',
    '--output-tokens', '64', '--tokenizer', 'approx', '--idle-wait', '0', '--no-progress', '--format', 'json',
  ]);
  if (r.code !== 0) throw new Error(`run failed (${r.code}): ${r.out.slice(-2000)}`);
  return (JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as { health: Health }).health;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'ib-ui-feed-'));
  const served = join(root, 'served');
  const plain = join(root, 'plain');
  mkdirSync(served);
  mkdirSync(plain);
  const ui = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'ui', '--results', served, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve) => {
    let out = '';
    ui.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) resolve(m[1] as string);
    });
  });
  // An open page: the dashboard pushes every live message to it.
  let frames = 0;
  const sse = get(new URL('/api/events', url), (res) => res.on('data', () => frames++));
  const rows: Record<'with' | 'without', Health[]> = { with: [], without: [] };
  try {
    for (let i = 0; i < PAIRS; i++) {
      // Alternate the order so drift in the machine's load falls on both sides.
      const order: Array<'with' | 'without'> = i % 2 === 0 ? ['with', 'without'] : ['without', 'with'];
      for (const kind of order) {
        const h = await run(join(kind === 'with' ? served : plain, `run-${i}`));
        rows[kind].push(h);
        process.stderr.write(`${kind} feed #${i + 1}: event-loop delay p99 ${fmt(h.eventLoopDelayP99Ms, 2)} ms, dispatch lag p99 ${fmt(h.dispatchLagP99Ms, 2)} ms, CPU ${fmt(h.clientCpuShare * 100, 0)}%\n`);
      }
    }
  } finally {
    sse.destroy();
    ui.kill('SIGINT');
    rmSync(root, { recursive: true, force: true });
  }
  const line = (kind: 'with' | 'without'): string[] => {
    const hs = rows[kind];
    const loop = hs.map((h) => h.eventLoopDelayP99Ms);
    return [
      kind === 'with' ? 'fed to a dashboard (+ an open page)' : 'no dashboard',
      String(hs.length),
      `${fmt(median(loop), 2)} (${fmt(Math.min(...loop), 2)}–${fmt(Math.max(...loop), 2)})`,
      fmt(median(hs.map((h) => h.dispatchLagP99Ms)), 2),
      fmt(median(hs.map((h) => h.clientCpuShare * 100)), 0),
    ];
  };
  console.log(JSON.stringify({ machine: machine(), rate: RATE, seconds: SECONDS, pairs: PAIRS, sseFrames: frames }));
  console.log(table(['run', 'runs', 'event-loop delay p99, ms: median (range)', 'dispatch lag p99, ms (median)', 'client CPU % (median)'], [line('without'), line('with')]));
}

await main();
