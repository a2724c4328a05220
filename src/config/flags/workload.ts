/** Flags of the workload section: prompt and output lengths, datasets, traces, prefixes, turns, images, the seed. */
import { number, text, wholeNumber } from './parsers.js';
import { flag, type FlagCommand } from './spec.js';

const LENGTHS: readonly FlagCommand[] = ['run', 'predict', 'plan'];
const RUN_PREDICT: readonly FlagCommand[] = ['run', 'predict'];
const RUN: readonly FlagCommand[] = ['run'];

export const WORKLOAD_FLAGS = [
  flag({ name: 'prompt-tokens', arg: 'n', section: 'workload', group: 'workload', commands: LENGTHS, value: '512',
    help: 'prompt length in tokens', parse: wholeNumber() }),
  flag({ name: 'output-tokens', arg: 'n', section: 'workload', group: 'workload', commands: LENGTHS, value: '128', explicit: true,
    help: 'output length in tokens', parse: wholeNumber() }),
  flag({ name: 'prompt-dist', arg: 'd', section: 'workload', group: 'workload', commands: LENGTHS,
    help: 'prompt lengths: N, uniform:A,B, normal:M,SD, exponential:M', parse: text }),
  flag({ name: 'output-dist', arg: 'd', section: 'workload', group: 'workload', commands: LENGTHS,
    help: 'output lengths, same forms as --prompt-dist', parse: text }),
  flag({ name: 'scenario', arg: 's', section: 'workload', group: 'workload', commands: LENGTHS,
    help: 'genai-bench scenario: D(in,out), N(m,sd)/(m,sd), U(a,b)/(c,d)', parse: text }),
  flag({ name: 'trace', arg: 'file', section: 'workload', group: 'sources', commands: RUN_PREDICT,
    help: 'replay: a trace, mooncake JSONL or Azure CSV (docs/workloads.md)', parse: text }),
  flag({ name: 'time-scale', arg: 'x', section: 'workload', group: 'sources', commands: RUN_PREDICT, shown: '1',
    help: "replay: multiply the trace's gaps (0.5 = twice as fast)", parse: number({ positive: true }),
    needs: { flag: 'trace', problem: '--time-scale goes with --trace (to slow the simulated engine down, use inferbench sim --model-time-scale)' } }),
  flag({ name: 'seed', arg: 'n', section: 'workload', group: 'workload', commands: RUN_PREDICT, value: '42',
    help: 'seed for prompts and arrivals', parse: wholeNumber({ min: 0 }) }),

  flag({ name: 'data', arg: 'file', section: 'workload', group: 'sources', commands: RUN,
    help: 'prompts from JSONL (prompt or messages), ShareGPT JSON or CSV', parse: text }),
  flag({ name: 'data-column', arg: 'name', section: 'workload', group: 'sources', commands: RUN, shown: 'prompt',
    help: 'CSV column that holds the prompt', parse: text }),
  flag({ name: 'tokenizer', arg: 'how', section: 'workload', group: 'workload', commands: RUN, shown: 'server where it can, else approx',
    help: 'prompt lengths counted by a tokenizer.json file, server (its /tokenize) or approx (o200k)', parse: text }),
  flag({ name: 'prefix-tokens', arg: 'n', section: 'workload', group: 'sources', commands: LENGTHS,
    help: 'shared system prefix of N tokens (prefix caching)', parse: wholeNumber() }),
  // commander's default is for help only: resolution sees it only when typed (cli/main.ts withSources).
  flag({ name: 'prefix-groups', arg: 'k', section: 'workload', group: 'sources', commands: LENGTHS, value: '1', onlyTyped: true,
    help: 'distinct shared prefixes', parse: wholeNumber(),
    needs: { flag: 'prefix-tokens', problem: '--prefix-groups needs --prefix-tokens, e.g. --prefix-tokens 256 --prefix-groups 4' } }),
  flag({ name: 'turns', arg: 'd', section: 'workload', group: 'sources', commands: RUN,
    help: 'multi-turn: turns per conversation (N or a distribution)', parse: text }),
  flag({ name: 'think-time', arg: 'ms', section: 'workload', group: 'sources', commands: RUN, shown: '0',
    help: 'multi-turn: pause before a turn, ms (or a distribution)', parse: text, needs: { flag: 'turns', problem: '--think-time goes with --turns' } }),
  // Images are checked against the API and the model together (config/image-options.ts).
  flag({ name: 'images', arg: 'n', section: 'workload', group: 'sources', commands: RUN,
    help: 'multimodal chat: N synthetic noise PNGs (seeded) after the text of every request' }),
  flag({ name: 'image-size', arg: 'WxH', section: 'workload', group: 'sources', commands: RUN, shown: '512x512',
    help: 'with --images: pixels of each image',
    needs: { flag: 'images', problem: '--image-size goes with --images N (the images per request), e.g. --images 1 --image-size 1024x768' } }),
] as const;
