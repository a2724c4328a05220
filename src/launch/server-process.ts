/**
 * One inference server's lifecycle as a process: start its command in a process group of its own (stdout and
 * stderr into the cell's server.log), wait until it is ready (readiness.ts), and stop it: SIGTERM to the group,
 * SIGKILL after the stop timeout, then check its port is free. Used by `inferbench matrix` (one server per cell)
 * and `plan --verify` (one per candidate).
 */
import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { forgetGroup, spawnGroup, type ProcessGroup } from './process-group.js';
import { waitPortFree, portIsFree } from './ports.js';
import { probeReady, type ReadyAnswer } from './readiness.js';

export { freePort, portIsFree } from './ports.js';
export { fillPlaceholders, placeholdersIn } from './placeholders.js';

export interface ServerLaunchSpec {
  /** Cell name for messages. */
  name: string;
  /** Shell command, placeholders already filled. */
  command: string;
  /** For start commands that return at once (`docker run -d …`): run to stop the server. */
  stopCommand?: string;
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The cell's server.log: the server's stdout and stderr. */
  logPath: string;
  /** Spawn → ready within this, else 'not-ready' (the CLI's default is 15 min). */
  readyTimeoutMs: number;
  /** SIGTERM to the process group, SIGKILL after this (the CLI's default is 30 s). */
  stopTimeoutMs: number;
  env?: Record<string, string>;
  /** The API to speak for the one-token request (default: what engine detection finds). */
  api?: string;
  model?: string;
  apiKey?: string;
  /** Time between readiness attempts (default 500 ms). */
  pollMs?: number;
}

export interface LaunchedServer {
  /** http://host:port */
  url: string;
  /** Spawn → ready. */
  startupSeconds: number;
  /** Latency of the one-token readiness request on the cold server. */
  firstRequestMs: number;
  pid?: number;
  /** What the readiness check found: the API it spoke, the model, the engine detection named. */
  ready: ReadyAnswer;
  /**
   * Whether the server is still up: its process group has a live process (with a stop command, whose start command
   * returns at once, this cannot tell and answers true). `exit`: the start command's exit once it happened.
   */
  alive(): boolean;
  exit(): { code: number | null; signal: string | null } | undefined;
  /** Idempotent; never leaves a process behind. portFree: nothing answers on the port afterwards. */
  stop(): Promise<{ portFree: boolean }>;
}

export type LaunchStatus = 'failed-to-start' | 'not-ready';

export class LaunchError extends Error {
  readonly status: LaunchStatus;
  /** The server log's last lines. */
  readonly logTail: string;
  /** The launch was aborted (Ctrl-C), not failed. */
  readonly interrupted: boolean;
  /** The process group the server ran in (gone by the time this is thrown), when one was started. */
  pid?: number;
  constructor(status: LaunchStatus, message: string, logTail: string, interrupted = false) {
    super(message);
    this.name = 'LaunchError';
    this.status = status;
    this.logTail = logTail;
    this.interrupted = interrupted;
  }
}

/** The last `lines` lines of a log file ('' when there is none). */
export function logTail(path: string, lines = 20): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return '';
  }
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

export async function launchServer(spec: ServerLaunchSpec, signal?: AbortSignal): Promise<LaunchedServer> {
  const host = spec.host ?? '127.0.0.1';
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${spec.port}`;
  const tail = (): string => logTail(spec.logPath);
  if (!(await portIsFree(spec.port, host))) {
    throw new LaunchError('failed-to-start', `${spec.name}: port ${spec.port} is in use before the server started (another process holds it)`, '');
  }
  const started = performance.now();
  const group = spawnGroup(spec.command, spec.logPath, spec.env, spec.stopCommand);
  const stop = stopper(spec, group, host);
  const fail = async (status: LaunchStatus, message: string, interrupted = false): Promise<never> => {
    await stop();
    const err = new LaunchError(status, message, tail(), interrupted);
    err.pid = group.pid;
    throw err;
  };
  const deadline = started + spec.readyTimeoutMs;
  let lastReason = 'no answer yet';
  for (;;) {
    if (signal?.aborted) return fail('not-ready', `${spec.name}: interrupted while waiting for the server to be ready`, true);
    const exit = group.exit();
    // A start command that returns at once (with --stop-cmd) exits 0 by design; any other exit before ready is a failure.
    if (exit !== undefined && !(spec.stopCommand !== undefined && exit.code === 0)) {
      const how = exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
      return fail('failed-to-start', `${spec.name}: the server command ${how} before it was ready`);
    }
    const left = deadline - performance.now();
    if (left <= 0) {
      return fail('not-ready', `${spec.name}: not ready within ${formatMs(spec.readyTimeoutMs)} (last: ${lastReason}); raise --ready-timeout for a slow-loading engine`);
    }
    const answer = await probeReady({ url, ...pick(spec) }, Math.round(Math.max(1000, Math.min(left, 120_000))));
    if (!('notReady' in answer)) {
      const startupSeconds = (performance.now() - started) / 1000;
      const alive = (): boolean => spec.stopCommand !== undefined || (group.exit() === undefined && group.alive());
      return { url, startupSeconds, firstRequestMs: answer.firstRequestMs, pid: group.pid, ready: answer, stop, alive, exit: group.exit };
    }
    lastReason = answer.notReady;
    await sleep(Math.min(spec.pollMs ?? 500, Math.max(0, deadline - performance.now())), signal);
  }
}

function pick(spec: ServerLaunchSpec): { api?: string; model?: string; apiKey?: string } {
  return {
    ...(spec.api !== undefined ? { api: spec.api } : {}),
    ...(spec.model !== undefined ? { model: spec.model } : {}),
    ...(spec.apiKey !== undefined ? { apiKey: spec.apiKey } : {}),
  };
}

/** stop(): the stop command (when there is one), SIGTERM to the group, SIGKILL after the timeout; once. */
function stopper(spec: ServerLaunchSpec, group: ProcessGroup, host: string): () => Promise<{ portFree: boolean }> {
  let stopping: Promise<{ portFree: boolean }> | undefined;
  return () => {
    stopping ??= (async () => {
      if (spec.stopCommand !== undefined) await runStopCommand(spec);
      if (group.alive()) {
        group.signal('SIGTERM');
        if (!(await waitGone(group, spec.stopTimeoutMs))) {
          group.signal('SIGKILL');
          await waitGone(group, 5000);
        }
      }
      // The leader reaped too (node does it on SIGCHLD), so kill(-pid, 0) no longer finds its zombie.
      if (group.exit() === undefined) await Promise.race([group.exited, sleep(2000)]);
      forgetGroup(group.pid);
      // The port: a server's socket can linger a moment after its process ends (and a docker proxy a bit longer).
      return { portFree: await waitPortFree(spec.port, host, Math.min(spec.stopTimeoutMs, 5000)) };
    })();
    return stopping;
  };
}

async function waitGone(group: ProcessGroup, withinMs: number): Promise<boolean> {
  const until = performance.now() + withinMs;
  while (group.alive()) {
    if (performance.now() >= until) return false;
    await sleep(50);
  }
  return true;
}

/** The user's stop command (`docker rm -f …`), its output appended to the server log; killed after the stop timeout. */
function runStopCommand(spec: ServerLaunchSpec): Promise<void> {
  return new Promise((resolve) => {
    const fd = openSync(spec.logPath, 'a');
    const child = spawn('/bin/sh', ['-c', spec.stopCommand as string], { stdio: ['ignore', fd, fd], env: { ...process.env, ...spec.env } });
    closeSync(fd);
    const timer = setTimeout(() => child.kill('SIGKILL'), spec.stopTimeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.once('error', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

export function formatMs(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms >= 1000) return `${+(ms / 1000).toFixed(1)} s`;
  return `${ms} ms`;
}
