import type { Command } from 'commander';
import { EXPLICIT_KEYS, ONLY_TYPED_KEYS } from '../config/flags/table.js';

/** Marks which defaulted flags the user actually typed (their meaning can depend on it): the table's `explicit` and `onlyTyped` rows. */
export function withSources(flags: Record<string, unknown>, cmd: Command): Record<string, unknown> {
  const out: Record<string, unknown> = { ...flags };
  for (const key of EXPLICIT_KEYS) out[`${key}Explicit`] = cmd.getOptionValueSource(key) === 'cli';
  for (const key of ONLY_TYPED_KEYS) if (cmd.getOptionValueSource(key) !== 'cli') out[key] = undefined;
  return out;
}
