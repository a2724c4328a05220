import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { resolveRunOptions } from '../../src/config/run-options.js';
import { EXAMPLES } from '../../src/cli/help-examples.js';
import { GROUP } from '../../src/cli/help-format.js';
import { buildProgram, withSources } from '../../src/cli/main.js';
import { resolvePlanOptions } from '../../src/cli/plan-options.js';
import { modelTimeScale } from '../../src/cli/sim-command.js';

/** A command's help, examples included, as a non-TTY prints it: 80 columns. */
function helpOf(name: string): string {
  const cmd = sub(buildProgram(), name);
  let out = '';
  cmd.configureOutput({ getOutHelpWidth: () => 80, writeOut: (s) => void (out += s) });
  cmd.outputHelp();
  return out;
}

function sub(program: Command, name: string): Command {
  const cmd = program.commands.find((c) => c.name() === name);
  if (!cmd) throw new Error(`no command ${name}`);
  return cmd;
}

/** Help split at blank lines: the heading of each block and its line count. */
function blocks(help: string): Array<{ heading: string; lines: number }> {
  return help
    .trim()
    .split(/\n\s*\n/)
    .map((b) => ({ heading: b.split('\n')[0] as string, lines: b.split('\n').length }));
}

/** Parses an example with the command's own flags; the action only captures what it was given. */
function parseExample(line: string): { name: string; flags: Record<string, unknown>; cmd: Command } {
  const [, name, ...args] = line.split(' ');
  const program = buildProgram();
  let got: { flags: Record<string, unknown>; cmd: Command } | undefined;
  sub(program, name as string).action((flags: Record<string, unknown>, cmd: Command) => {
    got = { flags, cmd };
  });
  program.parse(args.length ? [name as string, ...args] : [name as string], { from: 'user' });
  if (!got) throw new Error(`${line}: no action ran`);
  return { name: name as string, ...got };
}

describe('--help in groups, with defaults and examples (issue 17, item 6)', () => {
  it('run: every group in order, each short enough for one 80×24 screen', () => {
    const help = helpOf('run');
    const found = blocks(help).filter((b) => b.heading.endsWith(':') && b.heading !== 'Options:' && b.heading !== 'Examples:');
    expect(found.map((b) => b.heading)).toEqual([
      GROUP.target,
      GROUP.replicas,
      GROUP.load,
      GROUP.workload,
      GROUP.sources,
      GROUP.limits,
      GROUP.slo,
      GROUP.scale,
      GROUP.power,
      GROUP.gate,
      GROUP.outputs,
      GROUP.timeouts,
      GROUP.metadata,
      GROUP.embedded,
    ]);
    for (const name of ['run', 'predict', 'sim', 'plan', 'gate']) {
      for (const b of blocks(helpOf(name))) expect(b.lines, `${name} ${b.heading}`).toBeLessThanOrEqual(24);
    }
  });

  it('shows every default as typed: numbers as numbers, units on durations, implied defaults in words', () => {
    for (const name of ['run', 'predict', 'sim', 'plan', 'ls', 'report', 'compare', 'import', 'ui', 'gate']) {
      expect(helpOf(name), name).not.toMatch(/default: "/);
    }
    const run = helpOf('run').replace(/\s+/g, ' ');
    for (const shown of [
      '--prompt-tokens <n> prompt length in tokens (default: 512)',
      '(default: 5s without --max-requests)',
      '--timeout-first-byte <time> to the response headers (default: 10m)',
      '(default: 99)',
      '--sweep-rates <n> sweep: rates between its synchronous and throughput rows (default: 9)',
      '(default: $OPENAI_API_KEY)',
    ]) {
      expect(run).toContain(shown);
    }
    expect(helpOf('sim').replace(/\s+/g, ' ')).toContain('--port <n> port (0 = any free port) (default: 8000)');
  });

  it('prints a few examples per command, and each parses with the flags the command has', () => {
    for (const [name, examples] of Object.entries(EXAMPLES)) {
      expect(examples.length, name).toBeGreaterThan(0);
      const help = helpOf(name);
      for (const e of examples) expect(help).toContain(e.command);
    }
    for (const e of [...(EXAMPLES['run'] ?? []), ...(EXAMPLES['predict'] ?? [])]) {
      const { flags, cmd } = parseExample(e.command);
      if (typeof flags['seedFile'] === 'string') expect(existsSync(flags['seedFile'])).toBe(true);
      else expect(() => resolveRunOptions(withSources(flags, cmd), {}), e.command).not.toThrow();
    }
    for (const e of EXAMPLES['plan'] ?? []) {
      const { flags, cmd } = parseExample(e.command);
      expect(() => resolvePlanOptions({ ...flags, explicit: (n: string) => cmd.getOptionValueSource(n) === 'cli' })).not.toThrow();
    }
    for (const e of EXAMPLES['sim'] ?? []) expect(() => parseExample(e.command)).not.toThrow();
  });

  it('a flag that run, predict and sim share reads the same in each', () => {
    const program = buildProgram();
    const described = (name: string): Map<string, string> => new Map(sub(program, name).options.map((o) => [o.long ?? '', o.description]));
    const [run, predict, sim] = [described('run'), described('predict'), described('sim')];
    // Flags that mean something else where they appear: run's describe a real server (or record metadata about
    // it), predict's and sim's pick what the simulator models; sim's seed drives faults, the others' prompts.
    // sim's --time-scale is the hidden old name of --model-time-scale.
    const differ: Record<string, string[]> = { run: ['--model', '--gpu', '--gpus', '--quant', '--out', '--seed'], sim: ['--seed', '--time-scale'] };
    let compared = 0;
    for (const [flag, text] of predict) {
      for (const [name, other] of [['run', run], ['sim', sim]] as const) {
        if (!other.has(flag) || differ[name]?.includes(flag)) continue;
        expect(other.get(flag), `${name} ${flag}`).toBe(text);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(30);
    expect(run.get('--engine')).toBe(sim.get('--engine'));
  });

  it('--time-scale: replay speed in run/predict; sim calls its model time multiplier --model-time-scale and keeps the old name', () => {
    expect(helpOf('run')).toMatch(/--time-scale <x>\s+replay: multiply the trace's gaps/);
    const simHelp = helpOf('sim');
    expect(simHelp).toMatch(/--model-time-scale <x>\s+multiply all model time/);
    expect(simHelp.replace(/\s+/g, ' ')).toContain('also --time-scale');
    // `inferbench sim --time-scale 1.3` still parses, and means what --model-time-scale 1.3 means.
    const old = parseExample('inferbench sim --time-scale 1.3').flags;
    const now = parseExample('inferbench sim --model-time-scale 1.3').flags;
    const p: string[] = [];
    expect(modelTimeScale(old, p)).toBe(1.3);
    expect(modelTimeScale(now, p)).toBe(1.3);
    expect(p).toEqual([]);
    modelTimeScale({ timeScale: '1.3', modelTimeScale: '2' }, p);
    expect(p).toEqual(['--time-scale is the old name of --model-time-scale; give one of them']);
  });
});
