import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { repoRoot } from './cli.js';

/**
 * Set-up for every test file (vitest.config.ts `setupFiles`): the CLI's default results folder is
 * ./inferbench-results, the user's own. A test must send its runs to a temp folder (--out, --results); a run
 * folder that appears there while a test file runs fails that file, naming the folder, so no test can fill the
 * user's results folder unnoticed.
 */
const RESULTS = join(repoRoot, 'inferbench-results');
const listing = (): Set<string> => new Set(existsSync(RESULTS) ? readdirSync(RESULTS) : []);

let before = new Set<string>();
beforeAll(() => {
  before = listing();
});
/**
 * A run that stops before writing anything (a refused target, say) removes the folder it made; with two test files
 * running at once, another file's such run can be caught half-way. Only a folder that still holds a run's files
 * a moment later counts.
 */
const holdsRun = (name: string): boolean => {
  try {
    return readdirSync(join(RESULTS, name)).some((f) => !f.startsWith('.'));
  } catch {
    return false;
  }
};
afterAll(async () => {
  const fresh = [...listing()].filter((name) => !before.has(name) && !name.startsWith('.'));
  if (fresh.length > 0) await new Promise((r) => setTimeout(r, 2000));
  const added = fresh.filter(holdsRun);
  if (added.length > 0) {
    throw new Error(`a test wrote ${added.join(', ')} into ${RESULTS} while this file ran: pass --out or --results into a temp folder (fs.mkdtempSync)`);
  }
});
