/** Parent side of _sim-proc.ts: start `inferbench sim` in its own process, join clocks, read truth. */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TruthRecord } from '../src/sim/server/index.js';
import { clockSample, type ClockSample } from './_clock.js';
import { runqueueWaitMs } from './_sched.js';

export interface SimChild {
  url: string;
  pid: number;
  /** Add to a sim performance.now() time to get this process's performance.now() time. */
  toClientMs: number;
  /** Bound on the error of toClientMs (both processes' sampling brackets). */
  clockErrorMs: number;
  /** Difference between the hrtime join and a performance.timeOrigin join (cross-check only). */
  timeOriginDisagreementMs: number;
  /** The sim process's CPU time so far, its resident memory and its time waiting for a CPU. */
  usage(): Promise<{ cpuMicros: number; rssBytes: number; runqueueWaitMs: number }>;
  /** Finished requests after `since` (finish order); `seq` of the last one is the next cursor. */
  trace(since: number): Promise<TruthRecord[]>;
  close(): Promise<void>;
}

function ask<T>(child: ChildProcess, msg: string, key: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: unknown): void => {
      const v = (m as Record<string, unknown>)[key];
      if (v === undefined) return;
      child.off('message', on);
      resolve(v as T);
    };
    child.on('message', on);
    child.send(msg);
  });
}

export async function startSimChild(args: string[]): Promise<SimChild> {
  const entry = fileURLToPath(new URL('./_sim-proc.ts', import.meta.url));
  const child = fork(entry, ['--port', '0', ...args], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`inferbench sim did not start: ${out}`)), 30_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /at (http:\/\/[^\s]+?)\s/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`inferbench sim exited (${code}): ${out}`)));
  });
  const theirs = await ask<ClockSample>(child, 'clock', 'clock');
  const ours = clockSample();
  const toClientMs = theirs.offsetMs - ours.offsetMs;
  return {
    url,
    pid: child.pid as number,
    toClientMs,
    clockErrorMs: theirs.errorMs + ours.errorMs,
    timeOriginDisagreementMs: toClientMs - (theirs.timeOrigin - ours.timeOrigin),
    usage: async () => ({ ...(await ask<{ cpuMicros: number; rssBytes: number }>(child, 'usage', 'usage')), runqueueWaitMs: runqueueWaitMs(child.pid as number) }),
    trace: async (since) => {
      const res = await fetch(`${url}/sim/v1/trace?since=${since}`);
      const text = await res.text();
      return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as TruthRecord);
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
