/**
 * bench:overhead's `run` rows: client CPU per token of `inferbench run` as users run it — the built CLI
 * (bin/inferbench.js) in its own process, with its records, window, prompt building, progress lines and telemetry
 * sampling — against the paced server (bench/_paced-server.ts, its CPU not counted). The client's CPU is the whole
 * process tree's (getrusage at exit through bench/_exit-usage.mjs, µs). Incremental method: one run of N requests
 * and one of 3N against the same server; µs per token = (CPU of 3N − CPU of N) / (tokens of 3N − tokens of N), the
 * tokens counted by the server, so start-up (module loading, the tokenizer's tables) and the end (tables, files)
 * cancel. Beside it, the floor: a Node process that only reads the same sockets (_bare-reader.ts).
 */
import { spawn, fork } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startPacedServer, type PacedServer } from './_overhead-paced.js';

export const RUN_METHOD =
  'incremental over whole CLI runs: `inferbench run --profile concurrent` with --max-requests N, then 3N, against one paced server; ' +
  'CPU of the client process tree (getrusage at exit, user and kernel apart) and tokens of the replies the server wrote whole (a cool-down request cancelled midway adds none); µs/token = ΔCPU / Δtokens';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface RunCliOptions {
  n: number;
  streams: number;
  promptTokens: number;
  outputTokens: number;
  ttftMs: number;
  itlMs: number;
  /** Every frame of a reply in one write (the server's --burst): what the client does per request, not per read. */
  burst?: boolean;
  /** Another build's bin/inferbench.js (a before/after comparison); default this checkout's. */
  cli?: string;
}

export interface RunCliRow extends RunCliOptions {
  tokens: number;
  userUsPerToken: number;
  kernelUsPerToken: number;
  totalUsPerToken: number;
  /** Voluntary context switches per token: the client's wake-ups (1 = one wake per token, 0.1 = ten tokens per wake). */
  wakeupsPerToken: number;
  /** Tokens per second of the 3N run while its requests were in flight (its records: first send to last end). */
  tokensPerS: number;
  serverUsPerToken: number;
}

export interface BareRow {
  tokens: number;
  userUsPerToken: number;
  kernelUsPerToken: number;
  totalUsPerToken: number;
  readsPerToken: number;
  wakeupsPerToken: number;
  wallS: number;
}

/** The CLI is run from dist/: refuse a build older than src/ (the figures would be of other code). */
export function assertFreshBuild(): void {
  const newest = (dir: string): number => {
    let t = 0;
    for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
      if (e.isFile()) t = Math.max(t, statSync(join(e.parentPath ?? (e as unknown as { path: string }).path, e.name)).mtimeMs);
    }
    return t;
  };
  const dist = join(ROOT, 'dist');
  if (!existsSync(join(dist, 'cli', 'main.js')) || newest(join(ROOT, 'src')) > newest(dist)) {
    throw new Error('dist/ is missing or older than src/: run `npm run build` first (the run rows measure the built CLI)');
  }
}

interface CliReading {
  userUs: number;
  systemUs: number;
  switches: number;
  tokens: number;
  serverUs: number;
  tokensPerS: number;
}

async function runCliOnce(url: string, o: RunCliOptions, requests: number, server: PacedServer): Promise<CliReading> {
  const dir = mkdtempSync(join(tmpdir(), 'inferbench-overhead-run-'));
  const usageFile = join(dir, 'usage.json');
  const args = [
    '--import', join(ROOT, 'bench', '_exit-usage.mjs'), o.cli ?? join(ROOT, 'bin', 'inferbench.js'), 'run',
    '--target', url, '--api', 'openai-completions', '--profile', 'concurrent', '--concurrency', String(o.streams),
    '--max-requests', String(requests), '--prompt-tokens', String(o.promptTokens), '--output-tokens', String(o.outputTokens),
    '--out', join(dir, 'run'),
  ];
  try {
    const before = await server.usage();
    const child = spawn(process.execPath, args, { cwd: dir, env: { ...process.env, INFERBENCH_EXIT_USAGE: usageFile }, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const keep = (d: Buffer): void => {
      tail = (tail + d.toString()).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const after = await server.usage();
    if (code !== 0) throw new Error(`inferbench run exited ${code}:\n${tail}`);
    // The row's own requests: its cool-down ones (sent after the window while the load stays on, those still in flight
    // when the last measured request finished cancelled as incomplete) are left out of the failure check and counts.
    const records = readFileSync(join(dir, 'run', 'requests.jsonl'), 'utf8').split('\n').filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { status: string; sentAtMs: number; endAtMs: number; outputTokens: number; cooldown?: boolean })
      .filter((r) => r.cooldown !== true);
    const failed = records.filter((r) => r.status !== 'ok').length;
    if (failed > 0) throw new Error(`inferbench run recorded ${failed} failed requests of ${records.length}:\n${tail}`);
    // Tokens per second the client took in while requests were in flight (first send to last end).
    const spanMs = Math.max(...records.map((r) => r.endAtMs)) - Math.min(...records.map((r) => r.sentAtMs));
    const tokensPerS = records.reduce((a, r) => a + r.outputTokens, 0) / (spanMs / 1000);
    const u = JSON.parse(readFileSync(usageFile, 'utf8')) as { userUs: number; systemUs: number; childUserUs: number; childSystemUs: number; voluntarySwitches: number };
    return {
      userUs: u.userUs + u.childUserUs, systemUs: u.systemUs + u.childSystemUs, switches: u.voluntarySwitches,
      // Tokens of the replies the server wrote whole: the run's cool-down requests still in flight when its last
      // measured request finished are cancelled midway, and their partial replies are not requests the run made.
      tokens: after.replyTokens - before.replyTokens, serverUs: after.user + after.system - before.user - before.system, tokensPerS,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One pair of CLI runs (N, then 3N) against one paced server. */
export async function runCliPair(o: RunCliOptions): Promise<RunCliRow> {
  const server = await startPacedServer(['--ttft-ms', String(o.ttftMs), '--itl-ms', String(o.itlMs), ...(o.burst ? ['--burst'] : [])]);
  try {
    const a = await runCliOnce(server.url, o, o.n, server);
    const b = await runCliOnce(server.url, o, 3 * o.n, server);
    const tokens = b.tokens - a.tokens;
    const user = b.userUs - a.userUs;
    const kernel = b.systemUs - a.systemUs;
    return {
      ...o, tokens, userUsPerToken: user / tokens, kernelUsPerToken: kernel / tokens, totalUsPerToken: (user + kernel) / tokens,
      wakeupsPerToken: (b.switches - a.switches) / tokens, tokensPerS: b.tokensPerS, serverUsPerToken: (b.serverUs - a.serverUs) / tokens,
    };
  } finally {
    await server.close();
  }
}

/** The floor: _bare-reader.ts against its own paced server, N and 3N readings inside that process. */
export async function bareFloor(o: RunCliOptions): Promise<BareRow> {
  const server = await startPacedServer(['--ttft-ms', String(o.ttftMs), '--itl-ms', String(o.itlMs)]);
  try {
    const entry = fileURLToPath(new URL('./_bare-reader.ts', import.meta.url));
    const child = fork(entry, [server.url, String(o.streams), String(o.n), String(o.outputTokens)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`the bare reader exited ${code}: ${out}`);
    return JSON.parse(out) as BareRow;
  } finally {
    await server.close();
  }
}
