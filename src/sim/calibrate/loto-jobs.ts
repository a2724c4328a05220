/**
 * `fit.ts --loto --jobs N`: leave-one-table-out split over N child processes of fit.ts itself. Each table left out
 * is an independent refit, so the tables are shared out evenly (shareGroups), every child
 * starts from the same calibration (written to a file) and writes its figures as JSON; the parent merges them in
 * table order. Every process records all scenarios under that calibration before it leaves a table out
 * (Evaluator.prime), so the figures do not depend on how the tables are shared out.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SeedScenario } from '../seed-compare.js';
import type { FitPoint } from './evaluator.js';
import type { Calibration } from './types.js';

/**
 * Groups shared out over `jobs` lists: as many tables to each (a table's refit re-prices every scenario, so tables
 * cost about the same whatever their size), the larger ones spread first.
 */
export function shareGroups(scenarios: SeedScenario[], groups: string[], jobs: number): string[][] {
  const size = new Map<string, number>();
  for (const s of scenarios) size.set(s.group ?? s.table, (size.get(s.group ?? s.table) ?? 0) + 1);
  const lists = Array.from({ length: Math.max(1, Math.min(jobs, groups.length)) }, () => ({ groups: [] as string[], load: 0 }));
  for (const g of [...groups].sort((a, b) => (size.get(b) ?? 0) - (size.get(a) ?? 0) || a.localeCompare(b))) {
    const least = lists.reduce((a, b) => (b.groups.length < a.groups.length || (b.groups.length === a.groups.length && b.load < a.load) ? b : a));
    least.groups.push(g);
    least.load += size.get(g) ?? 0;
  }
  return lists.map((l) => l.groups).filter((g) => g.length > 0);
}

export interface LotoJobsOptions {
  /** fit.ts's own path (the child runs it with this process's Node flags, tsx's loader included). */
  script: string;
  /** Flags passed through to every child (--seeds, --corpus, --tables, --seed-weight, --prior-weight, --loto-iters). */
  passThrough: string[];
  log: (line: string) => void;
}

/** Runs the leave-one-table-out of `shares` (one list of groups per child) around `cal`; the figures, merged. */
export async function lotoInChildren(cal: Calibration, shares: string[][], opts: LotoJobsOptions): Promise<FitPoint[]> {
  const dir = mkdtempSync(join(tmpdir(), 'inferbench-loto-'));
  try {
    const calFile = join(dir, 'start.json');
    writeFileSync(calFile, JSON.stringify(cal));
    const outs = await Promise.all(shares.map((groups, i) => {
      const out = join(dir, `job-${i}.json`);
      const args = [...process.execArgv, opts.script, ...opts.passThrough, '--loto-only', '--no-in-sample',
        '--from', calFile, '--loto-tables', groups.join(','), '--json', out];
      opts.log(`LOTO job ${i + 1}/${shares.length}: ${groups.join(', ')}`);
      return new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
        child.on('error', reject);
        child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`LOTO job ${i + 1} (${groups.join(', ')}) exited with ${code}`))));
      });
    }));
    const order = shares.flat().sort();
    const pts = outs.flatMap((f) => (JSON.parse(readFileSync(f, 'utf8')) as { lotoPoints: FitPoint[] }).lotoPoints);
    return pts.sort((a, b) => order.indexOf(a.group) - order.indexOf(b.group));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
