import { Writable } from 'node:stream';
import { parseRunFlags } from '../../src/cli/run-args-parse.js';
import { runCommand, type RunOutcome } from '../../src/cli/run-command.js';

/** A stream that keeps what is written to it, standing in for stdout/stderr. */
export function textSink(): NodeJS.WriteStream & { text: () => string } {
  let text = '';
  const w = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  return Object.assign(w, { text: () => text }) as unknown as NodeJS.WriteStream & { text: () => string };
}

/**
 * `inferbench run ARGS` in this process (no spawn, no tsx start-up): run's own flag parsing and command, with
 * stdout/stderr captured. `env` is set for the run only (e.g. the writer's INFERBENCH_TEST_DISK_FULL_AFTER hook).
 */
export async function runInProcess(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string; outcome: RunOutcome }> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  const stdout = textSink();
  const stderr = textSink();
  try {
    const { opts } = parseRunFlags(args);
    const outcome = await runCommand(opts, { stdout, stderr });
    return { code: outcome.exitCode, stdout: stdout.text(), stderr: stderr.text(), outcome };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
