import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { configError } from '../core/errors.js';
import { DEFAULT_RESULTS_DIR, listRuns } from '../store/run-store.js';
import { clientBuilt } from '../ui/assets.js';
import { startDashboard, type Dashboard } from '../ui/server.js';

export const DEFAULT_UI_PORT = 8377;

export interface UiFlags {
  port?: string;
  results?: string;
}

type Io = { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream };

function parsePort(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isInteger(n) || n > 65535) throw configError(`--port ${JSON.stringify(raw)} is not a port number`, 'use 1-65535, or 0 for any free port');
  return n;
}

async function listen(resultsDir: string, port: number | undefined, io: Io): Promise<Dashboard> {
  try {
    return await startDashboard({ resultsDir, port: port ?? DEFAULT_UI_PORT });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' && port === undefined) {
      io.stderr.write(`note: port ${DEFAULT_UI_PORT} is in use; serving on a free port instead (pick one with --port)\n`);
      return startDashboard({ resultsDir, port: 0 });
    }
    if (code === 'EADDRINUSE') throw configError(`port ${port} on 127.0.0.1 is in use`, 'pick another with --port, or --port 0 for any free port');
    if (code === 'EACCES') throw configError(`no permission to listen on port ${port}`, 'pick a port above 1023 with --port');
    throw err;
  }
}

/**
 * `inferbench ui`: the local web dashboard over a results folder, on 127.0.0.1 until Ctrl-C. Runs written into
 * that folder while it serves (and `run --ui`) show there live.
 */
export async function uiCommand(flags: UiFlags, io: Io): Promise<number> {
  const port = parsePort(flags.port);
  const resultsDir = resolve(flags.results ?? DEFAULT_RESULTS_DIR);
  if (!existsSync(resultsDir)) {
    throw configError(`no results folder at ${resultsDir}`, `start a run first (\`inferbench run --ui\` shows it live), or pass --results DIR`);
  }
  if (!statSync(resultsDir).isDirectory()) throw configError(`--results ${flags.results ?? DEFAULT_RESULTS_DIR} is a file, not a folder`, 'pass the folder that holds the run folders');
  if (!clientBuilt()) throw configError('the dashboard\'s browser code is not built (dist/ui/client is missing)', 'run `npm run build`');
  const dashboard = await listen(resultsDir, port, io);
  const runs = listRuns(resultsDir).length;
  io.stdout.write(`inferbench dashboard: ${dashboard.url}\n`);
  io.stderr.write(`serving ${runs} run${runs === 1 ? '' : 's'} from ${resultsDir}; runs written there show live; Ctrl-C to stop\n`);
  await new Promise<void>((done) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      process.off('disconnect', stop);
      done();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    // Started by `run --ui`: the IPC channel closes when that run's process ends, however it ends.
    if (process.connected) process.once('disconnect', stop);
  });
  await dashboard.close();
  return 0;
}
