import { main } from '../../src/cli/main.js';
import type { CliResult } from './cli.js';

/**
 * Any `inferbench ARGS` (run, gate, predict, plan, compare, report, …) in this process, through the CLI's own entry
 * point `main` — the same commander program, actions and error-to-exit-code mapping as the binary — with what it
 * writes to stdout/stderr captured. No child process, no tsx start-up: use it wherever a test is about what a
 * command prints, writes or exits with, and spawn the binary (helpers/cli.ts) only where the test is about the
 * process itself.
 *
 * The commands write to process.stdout/stderr, so those are captured while the command runs: calls must not
 * overlap (they are serialised here), and a test must not expect its own writes to the real streams meanwhile.
 * `env` is set for the call only; CI=true as for a spawned CLI (no progress redraws).
 */
let queue: Promise<unknown> = Promise.resolve();

export function cliInProcess(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  const next = queue.then(() => once(args, { CI: 'true', ...env }));
  queue = next.catch(() => undefined);
  return next;
}

async function once(args: readonly string[], env: Record<string, string>): Promise<CliResult> {
  const savedEnv = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const savedExit = process.exitCode;
  const streams = [process.stdout, process.stderr] as const;
  const savedWrite = streams.map((s) => s.write);
  const savedListeners = streams.map((s) => s.listeners('error'));
  const text = ['', ''];
  streams.forEach((s, i) => {
    s.write = ((chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      text[i] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
      const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      done?.();
      return true;
    }) as typeof s.write;
  });
  Object.assign(process.env, env);
  process.exitCode = undefined;
  try {
    await main([...args]);
    const code = process.exitCode ?? 0;
    return { code: typeof code === 'number' ? code : Number(code), stdout: text[0] ?? '', stderr: text[1] ?? '' };
  } finally {
    process.exitCode = savedExit;
    streams.forEach((s, i) => {
      s.write = savedWrite[i] as typeof s.write;
      // main() adds an EPIPE handler to each stream per call: drop the ones this call added.
      for (const l of s.listeners('error')) if (!savedListeners[i]?.includes(l)) s.removeListener('error', l as (...a: unknown[]) => void);
    });
    for (const [k, v] of Object.entries(savedEnv)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
