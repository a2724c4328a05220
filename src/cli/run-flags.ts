/**
 * The flags of `run`, `predict` and `sim` (and the lengths `plan` shares), in help groups, as commander options made
 * from the flag table (config/flags/): name, value, default, group, help, parsing and commands are declared there
 * once. Where a flag means something else in one command (run's --gpu records metadata about a real server,
 * predict's picks the modelled GPU) it has one row per meaning, each naming its commands.
 */
import type { Command, Option } from 'commander';
import { flagRowsFor } from '../config/flags/table.js';
import { flagSyntax, type FlagCommand, type FlagSpec } from '../config/flags/spec.js';
import { SIM_FLAG_TABLE } from '../config/flags/simulator.js';
import { GATE_FLAG_TABLE } from '../config/flags/gate.js';
import { addOptions, GROUP, opt } from './help-format.js';

/** "a,b" then "c" → [a, b, c]: a repeatable flag's values. */
const collect = (v: string, prev: string[] = []): string[] => [...prev, ...v.split(',').filter((r) => r.trim() !== '')];

/** A row of the flag table as a commander option: its syntax, help text, group, default and choices. */
function tableOption(row: FlagSpec): Option {
  const option = opt(GROUP[row.group], flagSyntax(row), row.help, { ...(row.value !== undefined ? { value: row.value } : {}), ...(row.shown !== undefined ? { shown: row.shown } : {}) });
  if (row.choices) option.choices(row.choices);
  if (row.repeatable) option.argParser(collect);
  if (row.joinRepeats) option.argParser((v: string, prev?: string) => (prev === undefined || prev === row.value ? v : `${prev},${v}`));
  if (row.hidden) option.hideHelp();
  return option;
}

/** The load, workload, limits and SLO flags of `run`, which `predict` shares word for word (the flag table's rows for both). */
export function profileFlags(): Option[] {
  return flagRowsFor('run').filter((row) => row.commands.includes('predict')).map(tableOption);
}

/** Prompt and output lengths: `run`, `predict` and `plan`; and the simulator rows plan shares with predict (--interval-level). */
export function lengthFlags(): Option[] {
  return [...flagRowsFor('plan'), ...SIM_FLAG_TABLE.filter((row) => row.commands.includes('plan'))].map(tableOption);
}

/**
 * `run` only: the server, the workload's sources, request and timeout settings, metadata (the table's rows for run
 * alone). A new run flag (e.g. the run plan's --dry-run, --plan FILE) is a row in config/flags/, not an option here.
 */
export function runFlags(): Option[] {
  return flagRowsFor('run').filter((row) => !row.commands.includes('predict')).map(tableOption);
}

/** The flag table's rows of a command (run's table, then the simulator's), in table order. */
export function commandFlags(command: FlagCommand): Option[] {
  const own = [...SIM_FLAG_TABLE, ...GATE_FLAG_TABLE].filter((row) => row.commands.includes(command));
  // gate's own rows (--baseline, --candidate) lead its help; the rows it shares with run follow.
  return (command === 'gate' ? [...own, ...flagRowsFor(command)] : [...flagRowsFor(command), ...own]).map(tableOption);
}

const GROUP_ORDER: readonly string[] = Object.values(GROUP);

/** Adds lists of options to a command, grouped in GROUP's order (help prints groups in order of first use). */
export function withFlags(cmd: Command, ...lists: Option[][]): Command {
  const rank = (o: Option): number => {
    const i = GROUP_ORDER.indexOf(o.helpGroupHeading ?? '');
    return i < 0 ? GROUP_ORDER.length : i;
  };
  // Array.prototype.sort is stable: options keep their order inside a group.
  return addOptions(cmd, lists.flat().sort((a, b) => rank(a) - rank(b)));
}
