import { once } from 'node:events';
import { runCliInProcess } from '../../src/cli/main.js';
import { startModuleWorker } from '../../src/core/module-worker.js';
import type { SimClusterOptions } from '../../src/sim/cluster/cluster.js';
import type { CliResult } from './cli.js';
import { textSink } from './run-in-process.js';

/**
 * `inferbench ARGS` in this process, as helpers/cli.ts's runCli answers it (exit code, stdout, stderr) without a child
 * process or tsx start-up: main.ts's own program, flag parsing and error-to-exit-code mapping (runCliInProcess).
 */
export async function runCliHere(args: readonly string[]): Promise<CliResult> {
  const stdout = textSink();
  const stderr = textSink();
  const code = await runCliInProcess(args, { stdout, stderr });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

export interface SimThread {
  /** One URL per simulator asked for, in order. */
  urls: string[];
  /** For each cluster, the requests its router sent to each replica (SimCluster.routed); [] for an `argv` simulator. */
  routed(): Promise<number[][]>;
  /** Ends the thread, and every simulator with it. */
  close(): Promise<void>;
}

/**
 * Simulators served from one worker thread, their own event loop as a child process would give them, without starting
 * one: `{ argv }` runs `inferbench sim ARGV` (add '--port', '0'), `{ cluster }` startSimCluster(options).
 */
export async function startSimThread(items: Array<{ argv: string[] } | { cluster: SimClusterOptions }>): Promise<SimThread> {
  const worker = startModuleWorker(import.meta.url, 'in-process-sim-cli-worker', items);
  const ready = await new Promise<{ urls: string[] }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the simulator thread exited (${code}) before serving`)));
  });
  worker.removeAllListeners('exit');
  worker.removeAllListeners('error');
  // A failure later shows in the test's own requests (refused connections); the thread's error is not thrown here.
  worker.on('error', () => undefined);
  return {
    urls: ready.urls,
    routed: async () => {
      const reply = once(worker, 'message');
      worker.postMessage('routed');
      return ((await reply)[0] as { routed: number[][] }).routed;
    },
    close: async () => {
      await worker.terminate();
    },
  };
}
