/** How `--help` looks: options in named groups, defaults printed as typed (512, not "512"), examples at the end. */
import { type Command, type Help, Option } from 'commander';

/** Option group headings (declared with the flag table, config/flags/groups.ts). */
export { GROUP } from '../config/flags/groups.js';

/**
 * One option in a group. `shownDefault` is what help prints after "default:" — for commander's own default
 * (`value`) it is the value as typed; for a default decided later in code (`value` undefined: the code must see
 * that the flag was not given) it is a short phrase.
 */
export function opt(group: string, flags: string, description: string, defaults: { value?: string; shown?: string } = {}): Option {
  const option = new Option(flags, description).helpGroup(group);
  if (defaults.value !== undefined) option.default(defaults.value, defaults.shown ?? defaults.value);
  else if (defaults.shown !== undefined) option.defaultValueDescription = defaults.shown;
  return option;
}

/** Adds options, keeping the order given (help prints groups in order of their first option). */
export function addOptions(cmd: Command, options: readonly Option[]): Command {
  for (const o of options) cmd.addOption(o);
  return cmd;
}

/**
 * The description column: the text, then `(default: X)` with X as the user would type it. Choices are part of
 * each description already (`a | b | c`), so commander's quoted list is left out.
 */
export function optionDescription(option: Option): string {
  const takesValue = option.required || option.optional;
  const shown = option.defaultValueDescription ?? (option.defaultValue === undefined ? undefined : String(option.defaultValue));
  return takesValue && shown !== undefined ? `${option.description} (default: ${shown})` : option.description;
}

/** Installed on the root command before its subcommands are made, so every command inherits it. */
export const HELP_CONFIG: Partial<Help> = { optionDescription };

export interface Example {
  command: string;
  what: string;
}

/** `Examples:` after the options; each command is runnable as written (test/cli/help.test.ts parses them). */
export function addExamples(cmd: Command, examples: readonly Example[]): Command {
  const lines = examples.flatMap((e) => [`  ${e.command}`, `      ${e.what}`]);
  return cmd.addHelpText('after', `\nExamples:\n${lines.join('\n')}`);
}
