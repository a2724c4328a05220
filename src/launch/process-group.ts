/**
 * A shell command in a process group of its own (`detached: true`: the group id is the shell's pid), its stdout and
 * stderr appended to a log file. The whole group is signalled, so a server's workers (vLLM's engine core, a docker
 * client, `sh -c` children) go with it. Every group still up when node exits is killed there (SIGKILL, synchronous):
 * an uncaught error or a second Ctrl-C never leaves a server behind.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';

export interface GroupExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ProcessGroup {
  readonly pid: number;
  /** Resolves when the shell (the group's leader) has exited. */
  readonly exited: Promise<GroupExit>;
  /** The leader's exit once it happened. */
  exit(): GroupExit | undefined;
  signal(sig: NodeJS.Signals): void;
  /** True while any process of the group (zombies excepted) is alive. */
  alive(): boolean;
}

const live = new Map<number, { stopCommand?: string; env: NodeJS.ProcessEnv }>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const [pid, how] of live) {
      if (how.stopCommand !== undefined) spawnSync('/bin/sh', ['-c', how.stopCommand], { stdio: 'ignore', timeout: 10_000, env: how.env });
      signalGroup(pid, 'SIGKILL');
    }
    live.clear();
  });
}

export function spawnGroup(command: string, logPath: string, env: Record<string, string> | undefined, stopCommand?: string): ProcessGroup {
  installExitHook();
  const fd = openSync(logPath, 'a');
  const fullEnv = { ...process.env, ...env };
  let child: ChildProcess;
  try {
    child = spawn('/bin/sh', ['-c', command], { detached: true, stdio: ['ignore', fd, fd], env: fullEnv });
  } finally {
    closeSync(fd);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start /bin/sh for: ${command}`);
  live.set(pid, { ...(stopCommand !== undefined ? { stopCommand } : {}), env: fullEnv });
  let exitInfo: GroupExit | undefined;
  const exited = new Promise<GroupExit>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve(exitInfo);
    });
  });
  // Never keep node's event loop alive for a server: the matrix decides when it stops.
  child.unref();
  const group: ProcessGroup = {
    pid,
    exited,
    exit: () => exitInfo,
    signal: (sig) => signalGroup(pid, sig),
    alive: () => {
      const up = groupAlive(pid);
      if (!up) live.delete(pid);
      return up;
    },
  };
  return group;
}

/** Forget a group whose stop was handled (the exit hook then leaves it alone). */
export function forgetGroup(pid: number): void {
  live.delete(pid);
}

function signalGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // ESRCH: the group is gone already.
  }
}

/**
 * kill(-pgid, 0) succeeds while any member exists, zombies too: a server's worker re-parented to a PID 1 that does
 * not reap stays a zombie forever. On Linux the group's members are read from /proc and zombies do not count.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp …: comm may hold spaces and parentheses, so split after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z') return true;
  }
  return false;
}
