import { spawn, type ChildProcess } from 'node:child_process';
import { configError } from '../core/errors.js';
import { readMarker, type DashboardMarker } from './marker.js';

/** A dashboard started by `run --ui` in a child process of its own, so serving pages never costs the run a tick. */
export interface SpawnedDashboard {
  marker: DashboardMarker;
  /** After the run: keep serving until Ctrl-C (or the dashboard exits), then stop it. */
  hold(out: NodeJS.WritableStream): Promise<void>;
  stop(): void;
}

/**
 * Starts `inferbench ui --results DIR` as a child: same node, same flags (tsx when running from source), same
 * entry script. Its own process group keeps a Ctrl-C that stops the run from also killing the dashboard; the
 * IPC channel ends it when this process dies, however it dies.
 */
export async function spawnDashboard(resultsDir: string, errOut: NodeJS.WritableStream): Promise<SpawnedDashboard> {
  const entry = process.argv[1];
  if (!entry) throw configError('cannot start the dashboard: unknown entry script', 'start it yourself with `inferbench ui`');
  const child = spawn(process.execPath, [...process.execArgv, entry, 'ui', '--results', resultsDir], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    detached: true,
    env: process.env,
  });
  const kill = (): void => void (child.exitCode === null && child.signalCode === null && child.kill('SIGTERM'));
  process.once('exit', kill);
  child.stderr?.on('data', (d: Buffer) => errOut.write(`dashboard: ${d.toString()}`));
  const marker = await waitForServing(child, resultsDir).catch((err: unknown) => {
    kill();
    throw err;
  });
  child.stdout?.resume();
  return {
    marker,
    stop: kill,
    async hold(out) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      out.write(`the dashboard stays up at ${marker.url} — Ctrl-C to stop it\n`);
      await new Promise<void>((resolve) => {
        const done = (): void => {
          process.off('SIGINT', done);
          process.off('SIGTERM', done);
          resolve();
        };
        process.once('SIGINT', done);
        process.once('SIGTERM', done);
        child.once('exit', done);
      });
      kill();
    },
  };
}

function waitForServing(child: ChildProcess, resultsDir: string): Promise<DashboardMarker> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(configError('the dashboard did not start within 30 s', 'start it yourself with `inferbench ui` and run without --ui')), 30_000);
    child.stdout?.on('data', function onData(d: Buffer) {
      out += d.toString();
      // `ui` prints its URL after writing the marker: the marker then names this child.
      if (!/http:\/\/127\.0\.0\.1:\d+\//.test(out)) return;
      child.stdout?.off('data', onData);
      clearTimeout(timer);
      const marker = readMarker(resultsDir);
      if (marker && marker.pid === child.pid) resolve(marker);
      else reject(configError('the dashboard started but left no marker in the results folder'));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(configError(`the dashboard exited (${code ?? 'signal'}) before serving`, 'start it yourself with `inferbench ui` to see why'));
    });
  });
}
