/** `--workers=1,2` for the benches: the load-worker thread counts to run each scenario with. */
import { InferbenchError } from '../src/core/errors.js';

/** The most worker threads a bench row may ask for: past this a 2-to-16-core box measures thread churn. */
export const MAX_BENCH_WORKERS = 64;

/**
 * Parses the value of `--workers=` (a comma list of positive integers, duplicates dropped, order kept);
 * `undefined` (flag absent) gives `fallback`. A bad value is an E_USAGE error whose message says what to type.
 */
export function parseWorkerCounts(value: string | undefined, fallback: readonly number[]): number[] {
  if (value === undefined) return [...fallback];
  const counts: number[] = [];
  for (const part of value.split(',')) {
    const n = Number(part.trim());
    if (part.trim() === '' || !Number.isInteger(n) || n < 1 || n > MAX_BENCH_WORKERS) {
      throw new InferbenchError(
        'E_USAGE',
        `--workers=${value}: ${JSON.stringify(part)} is not a worker count; give whole numbers from 1 to ${MAX_BENCH_WORKERS}, comma-separated (e.g. --workers=1,2)`,
      );
    }
    if (!counts.includes(n)) counts.push(n);
  }
  return counts;
}

/** The value of `--name=value` in argv, or undefined. */
export function flagValue(argv: readonly string[], name: string): string | undefined {
  const prefix = `--${name}=`;
  return argv.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}
