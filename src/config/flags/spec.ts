/**
 * One row of the flag table: everything about a flag is said here once — its name, value, default, help group and
 * text, how its value is checked and converted, which options section it fills and which commands take it. The help
 * (cli/run-flags.ts), the raw-flag type and the readers (./table.ts) and the resolvers (config/sections/) come from it.
 */
import type { Problems } from '../parse.js';
import type { HelpGroup } from './groups.js';

/** Commands whose flags come from the table. */
export type FlagCommand = 'run' | 'predict' | 'plan' | 'sim' | 'gate';

/** The sections a run's options are grouped in (config/options.ts): each flag fills one. */
export type OptionSection = 'target' | 'workload' | 'load' | 'window' | 'outputs' | 'distribution';

/** Checks and converts a raw value; a bad one pushes one problem naming `flag` (as typed: `--max-seconds`) and gives undefined. */
export type FlagParser<T> = (raw: string, p: Problems, flag: string) => T | undefined;

export interface FlagSpec {
  /** The long name without its dashes: `max-seconds`; a switch that turns something off is `no-stream`. */
  readonly name: string;
  /** The value's placeholder in help (`time` → `--max-seconds <time>`); absent: a switch (true when given). */
  readonly arg?: string;
  /** The options section it resolves into; absent: not a run option (sim's server and faults, predict's calibration). */
  readonly section?: OptionSection;
  readonly group: HelpGroup;
  readonly help: string;
  /** commander's default: the raw value the flag holds when not typed (its source is then 'default'). */
  readonly value?: string;
  /** What help prints after "default:" when it is not `value` as typed (e.g. `30s`, or a phrase). */
  readonly shown?: string;
  /** The only values the flag takes (commander refuses others with its own message). */
  readonly choices?: readonly string[];
  readonly commands: readonly FlagCommand[];
  readonly parse?: FlagParser<unknown>;
  /** Resolution must know whether the user typed it or commander filled in `value` (raw `<key>Explicit`). */
  readonly explicit?: boolean;
  /** A commander default that resolution ignores unless typed (the value is only for help and for `explicit`). */
  readonly onlyTyped?: boolean;
  /** Not in help (an old name kept working). */
  readonly hidden?: boolean;
  /** May be given more than once; the values (each comma-separated) are collected into one list. */
  readonly repeatable?: boolean;
  /** May be given more than once; the values are joined with commas into one text (`--target A --target B` = `A,B`). */
  readonly joinRepeats?: boolean;
  /** The flag means nothing without another (its name): the one-line problem when that one is missing. */
  readonly needs?: { readonly flag: string; readonly problem: string };
}

/** Declares a row, keeping its literal types (name, parse's result) for the typed readers. */
export function flag<const S extends FlagSpec>(spec: S): S {
  return spec;
}

/** `max-seconds` → `maxSeconds`; `no-stream` → `stream` (commander's attribute names). */
export type CamelName<S extends string> = S extends `no-${infer R}` ? Camel<R> : Camel<S>;
type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;

export function camelName(name: string): string {
  return name.replace(/^no-/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** `--max-seconds <time>`, `--no-stream`: the flag as commander declares it and help prints it. */
export function flagSyntax(spec: FlagSpec): string {
  return spec.arg === undefined ? `--${spec.name}` : `--${spec.name} <${spec.arg}>`;
}
