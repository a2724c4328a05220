/**
 * The flag table of `run` (and of the flags `predict` and `plan` share with it): one row per flag, in the order help
 * prints them inside a group (groups print in GROUP's order). Sections are concatenated so that order holds: the
 * metadata group's --label (outputs) comes before --engine-version (target).
 *
 * From it come: the commander options and help (cli/run-flags.ts), the raw-flag type RawRunFlags, the readers the
 * section resolvers use (FlagReader: each value parsed by its row, each problem naming the flag), and the "X goes
 * with Y" checks (`needs`).
 */
import type { Problems } from '../parse.js';
import { DISTRIBUTION_FLAGS } from './distribution.js';
import { GATE_RUN_FLAGS } from './gate.js';
import { LOAD_FLAGS } from './load.js';
import { OUTPUT_FLAGS } from './outputs.js';
import { camelName, type CamelName, type FlagCommand, type FlagSpec, type OptionSection } from './spec.js';
import { TARGET_FLAGS } from './target.js';
import { WINDOW_FLAGS } from './window.js';
import { WORKLOAD_FLAGS } from './workload.js';

export const RUN_FLAG_TABLE = [...LOAD_FLAGS, ...WORKLOAD_FLAGS, ...WINDOW_FLAGS, ...OUTPUT_FLAGS, ...TARGET_FLAGS, ...DISTRIBUTION_FLAGS, ...GATE_RUN_FLAGS] as const;

type Row = (typeof RUN_FLAG_TABLE)[number];
type RowByKey = { [R in Row as CamelName<R['name']>]: R };
/** A flag's key as commander hands it over: `maxSeconds` for --max-seconds, `stream` for --no-stream. */
export type FlagKey = keyof RowByKey;
type ValueKey = { [K in FlagKey]: RowByKey[K] extends { arg: string } ? K : never }[FlagKey];
type SwitchKey = Exclude<FlagKey, ValueKey>;
/** What a row's parse gives (a row without one: the text as given). */
export type ParsedFlag<K extends FlagKey> = RowByKey[K] extends { parse: (...args: never[]) => infer T } ? Exclude<T, undefined> : string;

/**
 * Raw flag values as commander hands them over: strings for flags with a value, booleans for switches; and, for the
 * rows marked `explicit`, `<key>Explicit`: false when the value is commander's default rather than the user's
 * (undefined: given when set — for callers that pass only what the user gave).
 */
export type RawRunFlags = { [K in ValueKey]?: string } & { [K in SwitchKey]?: boolean } & {
  [R in Row as R extends { explicit: true } ? `${CamelName<R['name']>}Explicit` : never]?: boolean;
};

const BY_KEY = new Map<string, FlagSpec>(RUN_FLAG_TABLE.map((row) => [camelName(row.name), row]));

/** The table's row of a flag (every key of RawRunFlags has one). */
export function flagRow(key: FlagKey): FlagSpec {
  return BY_KEY.get(key) as FlagSpec;
}

/** The rows a command takes, in table order. */
export function flagRowsFor(command: FlagCommand, section?: OptionSection): FlagSpec[] {
  return RUN_FLAG_TABLE.filter((row: FlagSpec) => row.commands.includes(command) && (section === undefined || row.section === section));
}

/** Keys of the rows whose commander default must be told apart from a typed value (`<key>Explicit`). */
export const EXPLICIT_KEYS: readonly string[] = RUN_FLAG_TABLE.filter((row: FlagSpec) => row.explicit === true).map((row) => camelName(row.name));
/** Keys of the rows whose commander default resolution must not see (it is for help only). */
export const ONLY_TYPED_KEYS: readonly string[] = RUN_FLAG_TABLE.filter((row: FlagSpec) => row.onlyTyped === true).map((row) => camelName(row.name));

/**
 * Reads raw flags through their rows: each value checked and converted by its row's parse, each problem one line
 * naming the flag as typed. Never changes `raw`.
 */
export class FlagReader {
  private readonly failed = new Set<string>();

  constructor(
    readonly raw: Readonly<RawRunFlags>,
    readonly problems: Problems,
  ) {}

  /** The flag was given (any value, switches included). */
  has(key: FlagKey): boolean {
    return (this.raw as Record<string, unknown>)[key] !== undefined;
  }

  /** The raw text of a flag with a value. */
  text(key: ValueKey): string | undefined {
    return (this.raw as Record<string, string | undefined>)[key];
  }

  /** A switch's raw value (undefined: not given). */
  switch(key: SwitchKey): boolean | undefined {
    return (this.raw as Record<string, boolean | undefined>)[key];
  }

  /** Whether the user typed the value rather than commander filling in its default. */
  explicit(key: FlagKey): boolean {
    const mark = (this.raw as Record<string, unknown>)[`${key}Explicit`];
    return typeof mark === 'boolean' ? mark : this.has(key);
  }

  /** The parsed value when given; undefined when not given or malformed (then a problem names it). */
  given<K extends ValueKey>(key: K): ParsedFlag<K> | undefined {
    return this.parse(key, this.text(key));
  }

  /** The parsed value, or the row's default (`value`) parsed the same way when not given. */
  orDefault<K extends ValueKey>(key: K): ParsedFlag<K> | undefined {
    return this.parse(key, this.text(key) ?? flagRow(key).value);
  }

  /** The row's `needs` checks for the flags of one section (e.g. --barrier goes with --shard). */
  checkNeeds(section: OptionSection): void {
    for (const row of RUN_FLAG_TABLE as readonly FlagSpec[]) {
      if (row.section !== section || row.needs === undefined) continue;
      const key = camelName(row.name) as FlagKey;
      if (this.has(key) && !this.failed.has(key) && !this.has(camelName(row.needs.flag) as FlagKey)) this.problems.push(row.needs.problem);
    }
  }

  private parse<K extends ValueKey>(key: K, raw: string | undefined): ParsedFlag<K> | undefined {
    if (raw === undefined) return undefined;
    const row = flagRow(key);
    if (!row.parse) return raw as ParsedFlag<K>;
    const before = this.problems.length;
    const value = row.parse(raw, this.problems, `--${row.name}`) as ParsedFlag<K> | undefined;
    if (this.problems.length > before) this.failed.add(key);
    return value;
  }
}
