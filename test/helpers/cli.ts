import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * How tests start the CLI. `npm test` (scripts/test.sh) rebuilds dist/ when any source is newer and sets
 * INFERBENCH_TEST_CLI=dist: the built CLI starts in under half the CPU of tsx, over the suite's ~200 spawns.
 * A plain `vitest run FILE` runs the sources through tsx, so an edit is always what is tested.
 */
export const cliEntry: readonly string[] = process.env['INFERBENCH_TEST_CLI'] === 'dist' ? ['dist/cli/main.js'] : ['--import', 'tsx', 'src/cli/main.ts'];

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI from source (tsx) in a child process, as a user would run the bin. */
export function runCli(args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...cliEntry, ...args], {
      cwd: opts.cwd ?? root,
      env: { ...process.env, CI: 'true', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export const repoRoot = root;
