import type { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { GROUP } from '../../src/cli/help-format.js';
import { flagRowsFor, RUN_FLAG_TABLE } from '../../src/config/flags/table.js';
import { camelName, flagSyntax, type FlagSpec } from '../../src/config/flags/spec.js';

const rows = RUN_FLAG_TABLE as readonly FlagSpec[];

function command(name: string): Command {
  const cmd = buildProgram().commands.find((c) => c.name() === name);
  if (!cmd) throw new Error(`no command ${name}`);
  return cmd;
}

function helpOf(name: string): string {
  const cmd = command(name);
  let out = '';
  cmd.configureOutput({ getOutHelpWidth: () => 400, writeOut: (s) => void (out += s) });
  cmd.outputHelp();
  return out;
}

/** The option line as help prints it at a width that never wraps: flags, then the description and its default. */
const helpLine = (row: FlagSpec): RegExp => {
  const shown = row.arg === undefined ? undefined : (row.shown ?? row.value);
  const text = shown === undefined ? row.help : `${row.help} (default: ${shown})`;
  const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^\\s+${escape(flagSyntax(row))}\\s+${escape(text)}$`, 'm');
};

/** Issue 30, item 3: a flag of run is declared once, in the table (config/flags/), and run's help comes from it. */
describe('the flag table', () => {
  it('every row has a unique name, a help group, help text and at least one command', () => {
    const names = rows.map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
    for (const row of rows) {
      expect(GROUP[row.group], row.name).toBeDefined();
      expect(row.help.length, row.name).toBeGreaterThan(5);
      expect(row.commands.length, row.name).toBeGreaterThan(0);
      if (row.choices && row.value !== undefined) expect(row.choices, row.name).toContain(row.value);
    }
  });

  it("run's options are exactly the table's rows for run, with the table's defaults and choices", () => {
    const options: readonly Option[] = command('run').options;
    const fromTable = flagRowsFor('run');
    expect(options.map((o) => o.long)).toEqual(expect.arrayContaining(fromTable.map((r) => `--${r.name}`)));
    expect(options.length).toBe(fromTable.length);
    for (const row of fromTable) {
      const o = options.find((x) => x.long === `--${row.name}`) as Option;
      expect(o.attributeName(), row.name).toBe(camelName(row.name));
      expect(o.helpGroupHeading, row.name).toBe(GROUP[row.group]);
      expect(o.defaultValue, row.name).toBe(row.value);
      expect(o.argChoices, row.name).toEqual(row.choices);
    }
  });

  it('run --help prints every row of the table: its syntax, help text and default, under its group', () => {
    const help = helpOf('run');
    for (const row of flagRowsFor('run')) expect(help, row.name).toMatch(helpLine(row));
    // predict shares the load, workload, limits and SLO rows word for word; plan the length rows.
    const predict = helpOf('predict');
    for (const row of flagRowsFor('predict')) expect(predict, row.name).toMatch(helpLine(row));
    const plan = helpOf('plan');
    for (const row of flagRowsFor('plan')) expect(plan, row.name).toMatch(helpLine(row));
  });

  it('every row is in one options section, and the sections are the six of RunOptions', () => {
    expect(new Set(rows.map((r) => r.section))).toEqual(new Set(['target', 'workload', 'load', 'window', 'outputs', 'distribution']));
  });
});
