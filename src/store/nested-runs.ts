/**
 * Runs nested in a matrix or a plan --verify folder. Each cell (or candidate) keeps its run in `<cell>/run`, so
 * every such folder has the same name; a run is named, and its id derived, from that path instead
 * (`<matrix>/<cell>/run`), and the store finds them under a results folder as it finds top-level runs.
 *
 * The store knows the two folders by their index files only (matrix/ and verify/ sit above it in src/layers.ts).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/** A cell's (a verify candidate's) run folder, inside its cell folder. */
export const CELL_RUN_DIR = 'run';

/** matrix.json (src/matrix/matrix-file.ts) and verify.json (plan --verify): a folder holding one holds cells. */
const CONTAINER_INDEX = ['matrix.json', 'verify.json'] as const;

/** `plan --out DIR --verify N` keeps its verify folder at DIR/verify. */
const PLAN_VERIFY_DIR = 'verify';

export function isRunContainer(dir: string): boolean {
  return CONTAINER_INDEX.some((f) => existsSync(join(dir, f)));
}

const holdsSummary = (dir: string): boolean => existsSync(join(dir, 'summary.json'));

/**
 * The run's name: its folder's name, or for a cell's run in a matrix or verify folder the path from that folder
 * (`vllm-vs-tgi/vllm/run`; `plan-out/verify/1-1x-A100-80GB-fp16-vllm/run` for a plan's fixed `verify` folder). It
 * depends on the folders only, not on which results folder lists it, so a run's id is the same from `ls`, the
 * dashboard, `report` and `compare`; and a top-level run's name is its folder's, as it always was.
 */
export function runNameOf(dir: string): string {
  const abs = resolve(dir);
  const name = basename(abs);
  const cell = dirname(abs);
  const container = dirname(cell);
  if (name !== CELL_RUN_DIR || container === cell || !isRunContainer(container)) return name;
  const parent = dirname(container);
  const label = basename(container) === PLAN_VERIFY_DIR && parent !== container ? `${basename(parent)}/${PLAN_VERIFY_DIR}` : basename(container);
  return `${label}/${basename(cell)}/${name}`;
}

export interface RunDirRef {
  dir: string;
  name: string;
}

function subfolders(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => join(dir, d.name));
  } catch {
    return [];
  }
}

/** The cells' runs of a matrix or verify folder. */
function cellRuns(container: string): string[] {
  return subfolders(container)
    .map((cell) => join(cell, CELL_RUN_DIR))
    .filter(holdsSummary);
}

/**
 * Every run folder a results folder holds: the folders directly in it with a summary.json, and the cells' runs of
 * the matrix and verify folders in it (`DIR/verify` of a plan's --out folder too), or of the folder itself when it is
 * one (`inferbench ls --results MATRIX`). Unordered.
 */
export function findRunDirs(root: string): RunDirRef[] {
  const abs = resolve(root);
  if (!existsSync(abs) || !statSync(abs).isDirectory()) return [];
  const dirs: string[] = isRunContainer(abs) ? cellRuns(abs) : [];
  for (const sub of subfolders(abs)) {
    if (holdsSummary(sub)) dirs.push(sub);
    else if (isRunContainer(sub)) dirs.push(...cellRuns(sub));
    else if (isRunContainer(join(sub, PLAN_VERIFY_DIR))) dirs.push(...cellRuns(join(sub, PLAN_VERIFY_DIR)));
  }
  return dirs.map((dir) => ({ dir, name: runNameOf(dir) }));
}
