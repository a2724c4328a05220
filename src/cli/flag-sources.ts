import type { Command } from 'commander';

/** Marks which defaulted flags the user actually typed (their meaning can depend on it). */
export function withSources(flags: Record<string, unknown>, cmd: Command): Record<string, unknown> {
  return {
    ...flags,
    outputTokensExplicit: cmd.getOptionValueSource('outputTokens') === 'cli',
    numPromptsExplicit: cmd.getOptionValueSource('numPrompts') === 'cli',
    profileExplicit: cmd.getOptionValueSource('profile') === 'cli',
    arrivalExplicit: cmd.getOptionValueSource('arrival') === 'cli',
    sweepRatesExplicit: cmd.getOptionValueSource('sweepRates') === 'cli',
    ...(cmd.getOptionValueSource('prefixGroups') === 'cli' ? {} : { prefixGroups: undefined }),
  };
}
