import { main } from '../../src/cli/main.js';

export interface MainInProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

let busy = false;

/**
 * `inferbench ARGS` run through the CLI's own `main` in this process: the same command table, flag parsing, notes,
 * and the one `error: …` line (exit 2 for a user mistake, 1 otherwise) a spawned CLI prints, without a process start
 * or a tsx load. What the CLI writes to process.stdout/stderr while it runs is captured (and not shown); so is a
 * Node warning emitted meanwhile (a spawned CLI prints those on its stderr), as a `(node) NAME: message` line on
 * stderr. The exit code is what `main` left in process.exitCode (0 when it set none); the previous one is restored.
 * One at a time: the capture is process-wide. `env` is set for the command only.
 */
export async function mainInProcess(args: string[], env: Record<string, string> = {}): Promise<MainInProcessResult> {
  if (busy) throw new Error('mainInProcess: one command at a time (stdout/stderr are captured process-wide)');
  busy = true;
  // CI=true as runCli sets it (no progress line even where stderr is a terminal).
  const vars: Record<string, string> = { CI: 'true', ...env };
  const savedEnv = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  const savedExitCode = process.exitCode;
  process.exitCode = undefined;
  const out: string[] = [];
  const err: string[] = [];
  const restoreOut = capture(process.stdout, out);
  const restoreErr = capture(process.stderr, err);
  const errorListeners = new Set([process.stdout, process.stderr].flatMap((s) => s.listeners('error')));
  const onWarning = (w: Error): void => void err.push(`(node) ${w.name}: ${w.message}\n`);
  process.on('warning', onWarning);
  try {
    await main(args);
    const code = process.exitCode;
    return { code: typeof code === 'number' ? code : Number(code ?? 0), stdout: out.join(''), stderr: err.join('') };
  } finally {
    process.off('warning', onWarning);
    restoreOut();
    restoreErr();
    // main() listens for EPIPE on both streams each time it is called: take its listeners off again.
    for (const s of [process.stdout, process.stderr]) for (const l of s.listeners('error')) if (!errorListeners.has(l)) s.off('error', l as (e: Error) => void);
    process.exitCode = savedExitCode;
    for (const [k, v] of Object.entries(savedEnv)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    busy = false;
  }
}

/** Replaces a stream's write with one that keeps the text (and calls back), until the returned function is called. */
function capture(stream: NodeJS.WriteStream, sink: string[]): () => void {
  const own = Object.hasOwn(stream, 'write');
  const original = stream.write;
  stream.write = ((chunk: string | Uint8Array, encoding?: unknown, cb?: unknown): boolean => {
    sink.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString());
    const done = typeof encoding === 'function' ? encoding : cb;
    if (typeof done === 'function') queueMicrotask(() => (done as () => void)());
    return true;
  }) as typeof stream.write;
  return () => {
    if (own) stream.write = original;
    else delete (stream as { write?: unknown }).write;
  };
}
