import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { cliEntry, repoRoot, type CliResult } from './cli.js';

/**
 * `inferbench ARGS` in this process: the CLI's own `main` (commander's parsing, every command's action, its mapping of
 * usage mistakes to one line and exit 2), with what it writes to stdout and stderr captured and the exit code it sets
 * returned, as `runCli` returns them from a child process, without a node + tsx start-up per call.
 *
 * While it runs, the process looks like the CLI started from `cliEntry`: process.argv is [node, entry, ...ARGS] and
 * process.execArgv the entry's node flags (so `plan --verify --server-cmd sim`, which starts this CLI again as each
 * candidate's `inferbench sim`, starts the same entry a spawned CLI would), CI=true as runCli sets it, and
 * process.exitCode is put back afterwards. Calls are queued one after another (they share the process's streams).
 */
let queue: Promise<unknown> = Promise.resolve();

export function mainInProcess(args: string[]): Promise<CliResult> {
  const run = queue.then(() => runMain(args));
  queue = run.catch(() => undefined);
  return run;
}

type Write = typeof process.stdout.write;

function capturing(append: (text: string) => void): Write {
  return function write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    append(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString());
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') queueMicrotask(() => (done as () => void)());
    return true;
  } as Write;
}

async function runMain(args: string[]): Promise<CliResult> {
  const node = cliEntry.slice(0, -1);
  const entry = join(repoRoot, cliEntry[cliEntry.length - 1] as string);
  const saved = {
    argv: process.argv,
    execArgv: process.execArgv,
    exitCode: process.exitCode,
    ci: process.env['CI'],
    out: process.stdout.write,
    err: process.stderr.write,
    outListeners: process.stdout.listeners('error'),
    errListeners: process.stderr.listeners('error'),
  };
  let stdout = '';
  let stderr = '';
  process.argv = [process.execPath, entry, ...args];
  process.execArgv = [...node];
  process.exitCode = undefined;
  process.env['CI'] = 'true';
  process.stdout.write = capturing((t) => (stdout += t));
  process.stderr.write = capturing((t) => (stderr += t));
  let code: number | null;
  try {
    await main(args);
    code = typeof process.exitCode === 'number' ? process.exitCode : Number(process.exitCode ?? 0);
  } finally {
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
    // main() adds an EPIPE listener to each stream per call: take this call's off again.
    for (const [stream, before] of [[process.stdout, saved.outListeners], [process.stderr, saved.errListeners]] as const) {
      for (const l of stream.listeners('error')) if (!before.includes(l)) stream.off('error', l as (...a: unknown[]) => void);
    }
    process.argv = saved.argv;
    process.execArgv = saved.execArgv;
    process.exitCode = saved.exitCode;
    if (saved.ci === undefined) delete process.env['CI'];
    else process.env['CI'] = saved.ci;
  }
  return { code, stdout, stderr };
}

/**
 * The matrix tests' cells, made tiny: the simulator on a 10× faster clock (`--model-time-scale 0.1`), and a run of
 * short requests (32-token prompts counted by the approximate tokenizer, so no /tokenize round-trips; 8 output
 * tokens) at 20 req/s for a 0.5-s window. What the tests assert (statuses, folders, start-up, headline figures
 * present, the comparison's layout) does not depend on how long a cell measures.
 */
export const FAST_RUN = ['--profile', 'constant', '--rate', '20', '--max-seconds', '0.5', '--prompt-tokens', '32', '--output-tokens', '8', '--tokenizer', 'approx', '--no-progress'];
export const FAST_SIM_FLAGS = '--model-time-scale 0.1';
