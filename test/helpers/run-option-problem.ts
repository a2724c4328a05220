import { resolveRunOptions } from '../../src/config/run-options.js';

/** The usage error `run`'s option resolution gives for these flags, or a failure when it gives none. */
export function runOptionProblem(flags: Parameters<typeof resolveRunOptions>[0]): string {
  try {
    resolveRunOptions(flags, {});
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('no problem reported');
}
