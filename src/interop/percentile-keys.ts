import type { Stats } from '../results/stats.js';
import { partialStats } from './mapper.js';
import { num, type Obj } from './types.js';

/**
 * vLLM and SGLang write one key per statistic: `{mean,median,std}_<metric>_ms` and `p<P>_<metric>_ms`
 * (P printed as an int when whole: p99, p99.9). The p90/p95/p99 ones inferbench keeps are read; the file's
 * std is numpy's population stddev, as inferbench's.
 */
export function keyedStats(doc: Obj, metric: string, count: number): Stats | undefined {
  const get = (prefix: string): number | undefined => num(doc[`${prefix}_${metric}_ms`]);
  const mean = get('mean');
  if (mean === undefined) return undefined;
  return partialStats({ count, mean, median: get('median'), p90: get('p90'), p95: get('p95'), p99: get('p99'), stddev: get('std') });
}

/** Which of the statistics a stats block has, as `mean, median, std, p99` for the notes. */
export function presentFigures(s: Stats | undefined): string {
  if (!s) return 'none';
  const names: [keyof Stats, string][] = [['mean', 'mean'], ['median', 'median'], ['stddev', 'std'], ['p90', 'p90'], ['p95', 'p95'], ['p99', 'p99'], ['min', 'min'], ['max', 'max']];
  return names.filter(([k]) => Number.isFinite(s[k])).map(([, n]) => n).join(', ');
}
