/** Runs `inferbench run` against a target as a user would, and reads back its run folder. */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RequestRecord } from '../../src/metrics/record.js';
import { type ParsedSummary, summarySchema } from '../../src/store/schema.js';
import { runCli } from '../helpers/cli.js';

export interface RunResult {
  code: number | null;
  stderr: string;
  outDir: string;
  summary: ParsedSummary;
  records: RequestRecord[];
}

export async function runInferbench(target: string, args: string[], timeoutMs: number): Promise<RunResult> {
  const outDir = join(mkdtempSync(join(tmpdir(), 'inferbench-llamacpp-')), 'run');
  const res = await runCli(['run', '--target', target, ...args, '--json', '--no-progress', '--out', outDir], { timeoutMs });
  if (res.code !== 0) {
    throw new Error(`inferbench run exited ${res.code ?? 'killed'}: ${args.join(' ')}\n${res.stderr.slice(-3000)}`);
  }
  const summary = summarySchema.parse(JSON.parse(readFileSync(join(outDir, 'summary.json'), 'utf8')));
  const records = readFileSync(join(outDir, 'requests.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as RequestRecord);
  return { code: res.code, stderr: res.stderr, outDir, summary, records };
}

export const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The stage's mean of a metric from summary.json (NaN when absent). */
export function stageMean(summary: ParsedSummary, stage: number, metric: string): number {
  return summary.stages.find((s) => s.index === stage)?.metrics[metric]?.mean ?? Number.NaN;
}
