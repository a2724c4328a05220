/**
 * bench:overhead's paced scenario: client CPU per token against a server that paces tokens like an engine
 * (bench/_paced-server.ts in its own process), measured by the incremental method — CPU and tokens are read
 * when N requests have completed and again at 3N, so start-up, connection set-up and JIT warm-up cancel.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { getDialect } from '../src/dialects/index.js';
import { runBenchmark } from '../src/load/benchmark.js';
import { createHttpStageRunner } from '../src/load/http-runner.js';
import type { ProfileConfig } from '../src/load/profiles.js';
import { HttpTarget } from '../src/transport/http.js';
import { runqueueWaitMs } from './_sched.js';

export const PACED_METHOD =
  'incremental: client process.cpuUsage() (user and kernel apart) and tokens of completed requests, read when N requests ' +
  'have completed and again at 3N (closed loop, run to 3N + streams so the loop is still full at 3N); µs/token = ΔCPU / Δtokens';

export interface PacedOptions {
  /** Every frame of a reply in one write after the first-token delay, instead of one write per token. */
  burst: boolean;
  streams: number;
  outputTokens: number;
  /** Requests completed before the first reading; the second is at 3N. */
  n: number;
  ttftMs: number;
  itlMs: number;
  /** HttpTarget's client (default: h1 for the plain http: server). */
  client?: 'h1' | 'undici';
  /** Called at the first reading and at the second (e.g. to start and stop a CPU profile of the window). */
  onWindow?: (edge: 'start' | 'end') => void;
}

export interface PacedRow extends Omit<PacedOptions, 'onWindow'> {
  tokens: number;
  failed: number;
  wallS: number;
  tokensPerS: number;
  userUsPerToken: number;
  kernelUsPerToken: number;
  totalUsPerToken: number;
  /** Share of the window the client was runnable but not running (a busy box, not a slow client). */
  clientRunqueueShare: number;
  /** The server's CPU over the same window, per token (its own process; not counted above). */
  serverUsPerToken: number;
}

export interface PacedServer {
  url: string;
  /** The server's CPU µs so far, and the token frames it has written. */
  /** tokens: token frames written; replyTokens: those of whole replies (a reply cancelled midway adds none). */
  usage(): Promise<{ user: number; system: number; tokens: number; replyTokens: number }>;
  close(): Promise<void>;
}

export async function startPacedServer(args: string[]): Promise<PacedServer> {
  const entry = fileURLToPath(new URL('./_paced-server.ts', import.meta.url));
  const child: ChildProcess = fork(entry, args, { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the paced server did not start: ${out}`)), 30_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /at (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`the paced server exited (${code}): ${out}`)));
  });
  return {
    url,
    usage: () =>
      new Promise((resolve) => {
        const on = (m: unknown): void => {
          const { usage: u, tokens, replyTokens } = m as { usage?: { user: number; system: number }; tokens?: number; replyTokens?: number };
          if (!u) return;
          child.off('message', on);
          resolve({ ...u, tokens: tokens ?? 0, replyTokens: replyTokens ?? 0 });
        };
        child.on('message', on);
        child.send('usage');
      }),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

interface Reading {
  cpu: NodeJS.CpuUsage;
  tokens: number;
  atMs: number;
  waitMs: number;
  server: Promise<{ user: number; system: number }>;
}

export async function pacedScenario(o: PacedOptions): Promise<PacedRow> {
  const server = await startPacedServer(['--ttft-ms', String(o.ttftMs), '--itl-ms', String(o.itlMs), ...(o.burst ? ['--burst'] : [])]);
  const target = new HttpTarget({ baseUrl: server.url, connections: o.streams, timeouts: { connectMs: 30_000 }, ...(o.client ? { client: o.client } : {}) });
  let completed = 0;
  let tokens = 0;
  let failed = 0;
  let first: Reading | undefined;
  let second: Reading | undefined;
  const read = (): Reading => ({ cpu: process.cpuUsage(), tokens, atMs: performance.now(), waitMs: runqueueWaitMs(), server: server.usage() });
  const runner = createHttpStageRunner({
    target, dialect: getDialect('openai-completions'), model: 'paced-model', forceLength: true, stream: true, seed: 1,
    onRecord: (r) => {
      completed++;
      if (r.status === 'ok') tokens += r.outputTokens;
      else failed++;
      if (completed === o.n) {
        first = read();
        o.onWindow?.('start');
      } else if (completed === 3 * o.n) {
        second = read();
        o.onWindow?.('end');
      }
    },
  });
  const cfg: ProfileConfig = {
    profile: 'concurrent', concurrencies: [o.streams], limits: { maxRequests: 3 * o.n + o.streams },
    workload: { description: `short prompt, ${o.outputTokens} output tokens`, item: (i) => ({ prompt: `${i} tell me a story`, promptTokens: 5, promptTokenSource: 'client-tokenizer', outputTokens: o.outputTokens }) },
  };
  try {
    await runBenchmark(cfg, runner);
  } finally {
    await target.close();
  }
  if (!first || !second) throw new Error(`the paced run completed ${completed} of ${3 * o.n} requests`);
  const [s0, s1] = [await first.server, await second.server];
  await server.close();
  const dTokens = second.tokens - first.tokens;
  const user = second.cpu.user - first.cpu.user;
  const kernel = second.cpu.system - first.cpu.system;
  const wallMs = second.atMs - first.atMs;
  const { onWindow: _, ...opts } = o;
  return {
    ...opts, tokens: dTokens, failed, wallS: wallMs / 1000, tokensPerS: dTokens / (wallMs / 1000),
    userUsPerToken: user / dTokens, kernelUsPerToken: kernel / dTokens, totalUsPerToken: (user + kernel) / dTokens,
    clientRunqueueShare: (second.waitMs - first.waitMs) / wallMs,
    serverUsPerToken: (s1.user + s1.system - s0.user - s0.system) / dTokens,
  };
}
