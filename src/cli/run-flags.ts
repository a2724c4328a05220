/**
 * The flags of `run`, `predict` and `sim`, in help groups. `run`'s flags (and those `predict` and `plan` share with
 * it) come from the flag table (config/flags/): name, value, default, group, help, parsing and commands are declared
 * there once. `sim`'s and `predict`'s own flags are still declared here; where a flag means something else in one
 * command (run's --gpu records metadata about a real server, predict's picks the modelled GPU) the text says so.
 */
import { type Command, Option } from 'commander';
import { SIM_ENGINE_NAMES } from '../sim/engine/profiles.js';
import { KV_CACHE_DTYPE_HELP } from '../config/kv-cache-dtype.js';
import { flagRowsFor } from '../config/flags/table.js';
import { flagSyntax, type FlagSpec } from '../config/flags/spec.js';
import { DEFAULT_SIM } from './defaults.js';
import { addOptions, GROUP, opt } from './help-format.js';

/** A row of the flag table as a commander option: its syntax, help text, group, default and choices. */
function tableOption(row: FlagSpec): Option {
  const option = opt(GROUP[row.group], flagSyntax(row), row.help, { ...(row.value !== undefined ? { value: row.value } : {}), ...(row.shown !== undefined ? { shown: row.shown } : {}) });
  return row.choices ? option.choices(row.choices) : option;
}

/** The load, workload, limits and SLO flags of `run`, which `predict` shares word for word (the flag table's rows for both). */
export function profileFlags(): Option[] {
  return flagRowsFor('run').filter((row) => row.commands.includes('predict')).map(tableOption);
}

/** Prompt and output lengths: `run`, `predict` and `plan`. */
export function lengthFlags(): Option[] {
  return flagRowsFor('plan').map(tableOption);
}

/**
 * `run` only: the server, the workload's sources, request and timeout settings, metadata (the table's rows for run
 * alone). A new run flag (e.g. the run plan's --dry-run, --plan FILE) is a row in config/flags/, not an option here.
 */
export function runFlags(): Option[] {
  return flagRowsFor('run').filter((row) => !row.commands.includes('predict')).map(tableOption);
}

function kvCacheDtypeFlag(group: string): Option {
  return opt(group, KV_CACHE_DTYPE_HELP.flag, KV_CACHE_DTYPE_HELP.text, { shown: KV_CACHE_DTYPE_HELP.shown });
}

function engineText(): string {
  return `simulated engine: ${SIM_ENGINE_NAMES.join(' | ')}`;
}

/** What the simulated engine models: `sim` and `predict` (same words, same defaults). */
export function simEngineFlags(): Option[] {
  const s = GROUP.simulator;
  return [
    opt(s, '--engine <name>', engineText(), { value: DEFAULT_SIM.engine }),
    opt(s, '--model <name>', 'model from the catalog (more with --catalog)', { value: DEFAULT_SIM.model }),
    opt(s, '--gpu <name>', 'GPU from the catalog', { value: DEFAULT_SIM.gpu }),
    opt(s, '--gpus <n>', 'tensor-parallel GPUs', { value: String(DEFAULT_SIM.gpus) }),
    opt(s, '--quant <q>', 'fp16 | awq | gptq-int4 | gptq-int8', { shown: 'from the model name' }),
    kvCacheDtypeFlag(s),
    opt(s, '--catalog <file...>', 'add models/hardware from JSON (catalog format or a Hugging Face config.json)'),
  ];
}

/** `predict` only: outputs and calibration. */
export function predictFlags(): Option[] {
  const { outputs, metadata, calibration } = GROUP;
  const list = (v: string, prev: string[] = []): string[] => [...prev, ...v.split(',').filter((r) => r.trim() !== '')];
  return [
    opt(metadata, '--label <text>', 'free label stored with the run'),
    opt(outputs, '--out <dir>', 'also write a run folder with the predicted records'),
    opt(calibration, '--calibrate-from <run>', 'fit the simulator to a measured run (folder or id), print the error before and after, predict that run'),
    opt(calibration, '--calibration <file>', 'use constants saved by --save-calibration'),
    opt(calibration, '--save-calibration <file>', 'write the constants --calibrate-from fitted (JSON)'),
    opt(calibration, '--validate-on <run>', 'error of the prediction on another measured run, before and after calibration (repeatable)').argParser(list),
    opt(calibration, '--seed-file <file>', 'print predicted vs published for every figure of a seed table file'),
    opt(calibration, '--check <file>', 'print predicted vs published for every figure of a table file (data/public-tables JSON, or a seed file)'),
    opt(GROUP.simFeatures, '--spec-decode <k:accept>', 'speculative decoding: K drafts per step at this acceptance rate (e.g. 4:0.7)'),
  ];
}

/** `sim` only: the server and its faults. */
export function simFlags(): Option[] {
  const { simulator, server, faults } = GROUP;
  return [
    opt(simulator, '--max-num-seqs <n>', "the engine's batch limit", { shown: "the engine's own" }),
    opt(simulator, '--model-time-scale <x>', 'multiply all model time (1.3 = 30% slower; 0 = infinitely fast); also --time-scale', { shown: '1' }),
    // Its old name, kept working: `inferbench sim --time-scale 1.3` is in scripts and docs.
    new Option('--time-scale <x>').hideHelp(),
    opt(GROUP.simFeatures, '--reasoning-tokens <dist>', "reasoning tokens before each answer, in the engine's reasoning field (512, uniform:100,800, …)"),
    opt(GROUP.simFeatures, '--spec-decode <k:accept>', 'speculative decoding: K drafts per step at this acceptance rate (e.g. 4:0.7)'),
    opt(GROUP.simFeatures, '--no-prefix-caching', 'turn off the prefix cache (on in vllm and sglang, as in the real engines)'),
    opt(GROUP.simFeatures, '--enable-prompt-tokens-details', 'usage reports prompt_tokens_details.cached_tokens (OpenAI routes)'),
    opt(server, '--host <addr>', 'loopback address to bind', { value: '127.0.0.1' }),
    opt(server, '--port <n>', 'port (0 = any free port)', { value: '8000' }),
    opt(faults, '--faults <spec>', 'inject faults, e.g. 429:0.05,reset:0.02 (kinds: 429, 500, 503, reset, stall, malformed, truncate, slow-first-byte; docs/simulator.md)'),
    opt(faults, '--seed <n>', 'seed for faults, natural lengths and noise', { value: '1' }),
  ];
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
