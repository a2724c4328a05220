import { type ChildProcess, spawn } from 'node:child_process';
import { cliEntry, repoRoot } from './cli.js';

/** `inferbench sim` as a child process on a free port: resolves with its URL once it says where it listens. */
export function startSimProcess(args: readonly string[]): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...cliEntry, 'sim', '--port', '0', ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`sim did not start: ${out}`)), 60_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve({ url: m[1], child });
      }
    });
    child.on('exit', (code) => reject(new Error(`sim exited ${code}: ${out}`)));
  });
}
