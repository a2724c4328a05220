/** Runs `inferbench run` against a target as a user would, and reads back its run folder. */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RequestRecord } from '../../src/metrics/record.js';
import type { MetricName } from '../../src/results/metric-names.js';
import { type ParsedSummary, summarySchema } from '../../src/store/schema.js';
import { runCli } from '../helpers/cli.js';

export interface RunResult {
  code: number | null;
  stderr: string;
  outDir: string;
  summary: ParsedSummary;
  records: RequestRecord[];
  /** Per row (stage index), the server's peak gauges from summary.json's `stages[].server`. */
  serverPeaks: Map<number, { peakRunning?: number; peakWaiting?: number }>;
}

/** Per row of a run folder's summary.json: its streams (closed loops) and the server's peak gauges (`stages[].server`). */
export interface RowGauges {
  index: number;
  concurrency?: number;
  peakRunning?: number;
  peakWaiting?: number;
}

export function readRowGauges(runDir: string): RowGauges[] {
  const raw = JSON.parse(readFileSync(join(runDir, 'summary.json'), 'utf8')) as {
    stages?: Array<{ index: number; concurrency?: number; server?: { peakRunning?: number; peakWaiting?: number } }>;
  };
  return (raw.stages ?? []).map((s) => ({ index: s.index, concurrency: s.concurrency, peakRunning: s.server?.peakRunning, peakWaiting: s.server?.peakWaiting }));
}

/**
 * `allowFailedRun`: a run whose requests all failed exits non-zero by design; read its folder anyway.
 * Each call should pass its own --seed: the same seed repeats the same prompts, which a server's prompt
 * cache would then serve from an earlier run.
 */
export async function runInferbench(target: string, args: string[], timeoutMs: number, opts: { allowFailedRun?: boolean } = {}): Promise<RunResult> {
  const outDir = join(mkdtempSync(join(tmpdir(), 'inferbench-llamacpp-')), 'run');
  const res = await runCli(['run', '--target', target, ...args, '--json', '--no-progress', '--out', outDir], { timeoutMs });
  if (res.code !== 0 && !(opts.allowFailedRun === true && existsSync(join(outDir, 'summary.json')))) {
    throw new Error(`inferbench run exited ${res.code ?? 'killed'}: ${args.join(' ')}\n${res.stderr.slice(-3000)}`);
  }
  const summary = summarySchema.parse(JSON.parse(readFileSync(join(outDir, 'summary.json'), 'utf8')));
  const serverPeaks = new Map(readRowGauges(outDir).map((g) => [g.index, g]));
  const records = readFileSync(join(outDir, 'requests.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as RequestRecord);
  return { code: res.code, stderr: res.stderr, outDir, summary, records, serverPeaks };
}

export const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The stage's mean of a metric from summary.json (NaN when absent). */
export function stageMean(summary: ParsedSummary, stage: number, metric: MetricName): number {
  return summary.stages.find((s) => s.index === stage)?.metrics[metric]?.mean ?? Number.NaN;
}
