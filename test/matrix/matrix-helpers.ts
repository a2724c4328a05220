import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../helpers/cli.js';
import type { MatrixDoc } from '../../src/matrix/types.js';

/** Server commands the matrix tests start: the built CLI's simulator and the tiny chat server, by absolute path. */
export const simCmd = (engine: string): string => `"${process.execPath}" "${join(repoRoot, 'bin/inferbench.js')}" sim --engine ${engine} --port {port}`;
export const tinyCmd = (mode = 'ok'): string => `"${process.execPath}" "${join(repoRoot, 'test/helpers/tiny-server.mjs')}" {port} ${mode}`;

/** A short fixed profile: 10 requests at 5 req/s. */
export const SHORT_RUN = ['--profile', 'constant', '--rate', '5', '--max-seconds', '2', '--no-progress'];

export function readMatrix(dir: string): MatrixDoc {
  return JSON.parse(readFileSync(join(dir, 'matrix.json'), 'utf8')) as MatrixDoc;
}

/** True once no process of the group is left (kill(-pid, 0) throws); waits for PID 1 to reap orphans. */
export async function groupGone(pid: number): Promise<boolean> {
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      process.kill(-pid, 0);
    } catch {
      return true;
    }
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every server group the matrix started is gone. */
export async function noServerLeft(doc: MatrixDoc): Promise<string[]> {
  const left: string[] = [];
  for (const c of doc.cells) if (c.pid !== undefined && !(await groupGone(c.pid))) left.push(`${c.name} (pid ${c.pid})`);
  return left;
}
