import { spawn, type ChildProcess } from 'node:child_process';
import { cliEntry, repoRoot } from '../helpers/cli.js';

/** A CLI process that keeps running (`ui`, `run --ui`): its output so far, a wait for a line, and a stop. */
export interface LongCli {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}): LongCli {
  const child = spawn(process.execPath, [...cliEntry, ...args], {
    cwd: repoRoot,
    env: { ...process.env, CI: 'true', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const w of waiters) w();
  };
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
    wake();
  });
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
    wake();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const m = pattern.exec(out) ?? pattern.exec(err);
          if (m) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(m);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${pattern} within ${timeoutMs} ms; stdout: ${out.slice(-2000)}\nstderr: ${err.slice(-2000)}`));
        }, timeoutMs);
        waiters.add(check);
        void exited.then(() => setTimeout(check, 0));
        check();
      });
    },
    async stop(signal = 'SIGINT') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
