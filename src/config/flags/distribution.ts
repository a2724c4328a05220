/** Flags of the distribution section: worker threads, shards over hosts, and when they start. */
import { parseShard } from '../../load/shard.js';
import { parseNumber } from '../parse.js';
import { text } from './parsers.js';
import { flag, type FlagCommand, type FlagParser } from './spec.js';

const RUN: readonly FlagCommand[] = ['run'];

/** `--workers`: a positive integer (at most 64) or `auto`. */
const workers: FlagParser<number | 'auto'> = (raw, p, name) => {
  if (raw.trim() === 'auto') return 'auto';
  const n = parseNumber(name, raw, p, { integer: true, positive: true });
  if (n !== undefined && n > 64) {
    p.push(`${name} ${n} is more threads than any host here needs; use at most one per core (or auto)`);
    return undefined;
  }
  return n;
};

const shard: FlagParser<NonNullable<ReturnType<typeof parseShard>>> = (raw, p, name) => {
  const spec = parseShard(raw);
  if (!spec) p.push(`${name} ${JSON.stringify(raw)} is not I/N with 0 ≤ I < N; write it like ${name} 0/3 (the first of three)`);
  return spec ?? undefined;
};

/** ISO-8601 with a date and a time, as epoch ms; a bare date or a number is a mistake, not midnight or epoch ms. */
const instant: FlagParser<number> = (raw, p, name) => {
  const at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(at)) {
    p.push(`${name} ${JSON.stringify(raw)} is not an ISO-8601 instant; write it like ${name} 2026-11-24T10:00:00Z`);
    return undefined;
  }
  return at;
};

export const DISTRIBUTION_FLAGS = [
  flag({ name: 'workers', arg: 'n', section: 'distribution', group: 'scale', commands: RUN, value: '1',
    help: 'load-generating threads, each with its own connections: N or auto (one unless the load needs more)', parse: workers }),
  flag({ name: 'shard', arg: 'i/n', section: 'distribution', group: 'scale', commands: RUN,
    help: 'run part I of N of this run (0-based; same flags and seed on every shard), then inferbench merge the folders', parse: shard }),
  flag({ name: 'barrier', arg: 'dir', section: 'distribution', group: 'scale', commands: RUN,
    help: 'with --shard: a folder every shard can write (shared volume); shards meet there so every row starts together', parse: text,
    needs: { flag: 'shard', problem: '--barrier goes with --shard I/N (shards meet there before every row)' } }),
  flag({ name: 'start-at', arg: 'iso', section: 'distribution', group: 'scale', commands: RUN,
    help: 'start the first row at this wall-clock instant (ISO-8601, e.g. 2026-11-24T10:00:00Z) so shards start together', parse: instant }),
] as const;
