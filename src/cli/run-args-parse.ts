import { Command, CommanderError } from 'commander';
import { resolveRunOptions } from '../config/run-options.js';
import type { RunOptions } from '../config/run-options.js';
import { configError } from '../core/errors.js';
import { withSources } from './flag-sources.js';
import { profileFlags, runFlags, withFlags } from './run-flags.js';

/**
 * `run`'s flags handed to another command (`k8s`, `matrix`, `plan --verify` after `--`): parsed with run's own flag
 * table and resolved with run's own rules, so they mean exactly what they mean to `run`. A mistake is one config
 * error starting with `what` ("run flags: unknown option '--x'"). `env`: the environment the options resolve in
 * (k8s passes none: the pods have their own, and the local OPENAI_API_KEY must not leak into the check).
 */
export function parseRunFlags(
  args: readonly string[],
  o: { what?: string; env?: NodeJS.ProcessEnv; notices?: string[] } = {},
): { opts: RunOptions; profileGiven: boolean } {
  const cmd = withFlags(new Command('run'), profileFlags(), runFlags())
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined })
    .action(() => undefined);
  try {
    cmd.parse([...args], { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    const why = err.code === 'commander.helpDisplayed' ? "for run's flags see inferbench run --help" : err.message.replace(/^error: /, '');
    throw configError(`${o.what ?? 'run flags'}: ${why}`);
  }
  const opts = resolveRunOptions(withSources(cmd.opts(), cmd), o.env ?? process.env, undefined, o.notices ?? []);
  return { opts, profileGiven: cmd.getOptionValueSource('profile') === 'cli' };
}
