/**
 * Where readings come from: an HTTP page polled on a timer (DCGM exporter, trtllm-serve's /energy_metrics, the
 * target's own /metrics) or a spawned process's output lines (nvidia-smi's query loop, any `cmd:` command). Each hands
 * its readings to `emit` as they arrive; none blocks anything (timers and stream events on the control plane).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { createTextGetter, type TextGetter } from '../transport/text-get.js';
import type { PowerSample } from './samples.js';

/** A reading that takes longer than this is skipped (the next poll tries again). */
const READ_TIMEOUT_MS = 2000;

export interface ReadingSource {
  /** Resolves once the first readings came (true) or the source gave none in time or failed (false, with why). */
  start(emit: (samples: PowerSample[]) => void): Promise<{ ok: boolean; problem?: string }>;
  stop(): void;
}

/** Polls `url` every `intervalMs`; each body is parsed at the midpoint of its GET (the time the page describes). */
export function pollingSource(url: string, parse: (body: string, t: number) => PowerSample[], intervalMs: number, headers: Record<string, string> = {}): ReadingSource {
  const getter: TextGetter = createTextGetter(url, headers);
  let timer: NodeJS.Timeout | undefined;
  let busy = false;
  let emit: (samples: PowerSample[]) => void = () => {};
  const poll = async (): Promise<number> => {
    if (busy) return 0;
    busy = true;
    try {
      const sent = performance.now();
      const body = await getter.get(READ_TIMEOUT_MS);
      if (body === undefined) return 0;
      const samples = parse(body, (sent + performance.now()) / 2);
      if (samples.length > 0) emit(samples);
      return samples.length;
    } finally {
      busy = false;
    }
  };
  return {
    async start(e) {
      emit = e;
      const n = await poll();
      if (n === 0) {
        getter.close();
        return { ok: false, problem: `${url} gave no power readings` };
      }
      timer = setInterval(() => void poll(), intervalMs);
      timer.unref();
      return { ok: true };
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      getter.close();
    },
  };
}

/**
 * Runs `command` (with `args`, or through the shell when `args` is undefined) and parses each stdout line. The
 * process gets a group of its own, ended whole at stop (a shell's children too).
 */
export function spawnedSource(
  name: string,
  command: string,
  args: readonly string[] | undefined,
  parse: (line: string, receivedAt: number) => PowerSample | undefined,
  firstReadingTimeoutMs: number,
): ReadingSource {
  let child: ChildProcess | undefined;
  let stopped = false;
  return {
    start(emit) {
      return new Promise((resolve) => {
        let settled = false;
        const settle = (r: { ok: boolean; problem?: string }): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timeout);
          resolve(r);
        };
        const timeout = setTimeout(() => settle({ ok: false, problem: `${name} printed no power reading within ${firstReadingTimeoutMs / 1000} s` }), firstReadingTimeoutMs);
        try {
          child = args === undefined
            ? spawn(command, { shell: true, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
            : spawn(command, [...args], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
        } catch (err) {
          settle({ ok: false, problem: `${name} could not start: ${(err as Error).message}` });
          return;
        }
        let stderr = '';
        child.stderr?.on('data', (d: Buffer) => void (stderr = (stderr + d.toString()).slice(-400)));
        child.on('error', (err: NodeJS.ErrnoException) => {
          settle({ ok: false, problem: err.code === 'ENOENT' ? `${command} was not found on PATH` : `${name} could not start: ${err.message}` });
        });
        child.on('exit', (code) => {
          if (!stopped) settle({ ok: false, problem: `${name} exited (code ${code ?? 'signal'}) before printing a power reading${stderr.trim() ? `: ${stderr.trim().split('\n').pop()}` : ''}` });
        });
        let rest = '';
        child.stdout?.on('data', (d: Buffer) => {
          const at = performance.now();
          rest += d.toString();
          const lines = rest.split('\n');
          rest = lines.pop() ?? '';
          const samples = lines.map((l) => parse(l, at)).filter((s): s is PowerSample => s !== undefined);
          if (samples.length === 0) return;
          emit(samples);
          settle({ ok: true });
        });
      });
    },
    stop() {
      stopped = true;
      const c = child;
      if (!c || c.exitCode !== null || c.pid === undefined) return;
      try {
        process.kill(-c.pid, 'SIGTERM');
      } catch {
        c.kill('SIGTERM');
      }
    },
  };
}
