/**
 * Starts a real llama-server on 127.0.0.1 (a free port), waits until it has loaded the model, keeps its log,
 * and stops it. The log is where the server prints its own per-request timings (see server-log.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

export interface LlamaServer {
  url: string;
  port: number;
  /** Everything the server has logged so far (stdout + stderr). */
  log(): string;
  stop(): Promise<void>;
}

export interface LlamaServerOptions {
  binary: string;
  model: string;
  parallel: number;
  ctx: number;
  threads: number;
  extraArgs?: string[];
  startTimeoutMs?: number;
}

/** Asks the kernel for a free loopback port (released at once; llama-server binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export async function startLlamaServer(opts: LlamaServerOptions): Promise<LlamaServer> {
  const port = await freePort();
  const args = [
    '-m', opts.model,
    '--host', '127.0.0.1',
    '--port', String(port),
    '--parallel', String(opts.parallel),
    '-c', String(opts.ctx),
    '-t', String(opts.threads),
    '-tb', String(opts.threads),
    '--metrics',
    ...(opts.extraArgs ?? []),
  ];
  const child = spawn(opts.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  let exited: string | undefined;
  child.on('exit', (code, signal) => (exited = `exit ${code ?? signal ?? '?'}`));
  child.on('error', (e) => (exited = e.message));

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (opts.startTimeoutMs ?? 60_000);
  for (;;) {
    if (exited !== undefined) throw new Error(`llama-server stopped while starting (${exited}):\n${log.slice(-3000)}`);
    if (Date.now() > deadline) {
      await stop(child);
      throw new Error(`llama-server did not become ready on ${url}:\n${log.slice(-3000)}`);
    }
    // /health answers 503 while the model loads and 200 once it can serve.
    const ok = await fetch(`${url}/health`).then((r) => r.ok, () => false);
    if (ok) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, port, log: () => log, stop: () => stop(child) };
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
