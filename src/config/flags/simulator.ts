/**
 * Rows of the flag table for the simulated engine: what `sim` serves and `predict` models (engine, model, GPU, …),
 * predict's own outputs and calibration, and sim's server, features and faults. Kept apart from RUN_FLAG_TABLE
 * (./table.ts) because some names mean something else here (run's --gpu records metadata; here it picks the GPU
 * modelled) — each command takes one row per name. Rows with a section resolve into the run options (predict).
 */
import { SIM_ENGINE_NAMES } from '../../sim/engine/profiles.js';
import { DEFAULT_SIM } from '../../sim/default-sim.js';
import { KV_CACHE_DTYPE_HELP } from '../kv-cache-dtype.js';
import { flag, type FlagCommand, type FlagSpec } from './spec.js';

const SIM_PREDICT: readonly FlagCommand[] = ['sim', 'predict'];
const PREDICT: readonly FlagCommand[] = ['predict'];
const SIM: readonly FlagCommand[] = ['sim'];
const SPEC_DECODE = 'speculative decoding: K drafts per step at this acceptance rate (e.g. 4:0.7)';

export const SIM_FLAG_TABLE: readonly FlagSpec[] = [
  flag({ name: 'engine', arg: 'name', section: 'target', group: 'simulator', commands: SIM_PREDICT, value: DEFAULT_SIM.engine,
    help: `simulated engine: ${SIM_ENGINE_NAMES.join(' | ')}` }),
  flag({ name: 'model', arg: 'name', section: 'target', group: 'simulator', commands: SIM_PREDICT, value: DEFAULT_SIM.model,
    help: 'model from the catalog (more with --catalog)' }),
  flag({ name: 'gpu', arg: 'name', section: 'target', group: 'simulator', commands: SIM_PREDICT, value: DEFAULT_SIM.gpu, help: 'GPU or CPU from the catalog, or cpu:<cores>c:<GB/s>' }),
  flag({ name: 'gpus', arg: 'n', section: 'target', group: 'simulator', commands: SIM_PREDICT, value: String(DEFAULT_SIM.gpus), help: 'tensor-parallel GPUs' }),
  flag({ name: 'quant', arg: 'q', section: 'target', group: 'simulator', commands: SIM_PREDICT, shown: 'from the model name', help: 'fp16 | awq | gptq-int4 | gptq-int8 | fp8 | GGUF Q4_K_M, Q8_0, …' }),
  flag({ name: 'parallel', arg: 'n', group: 'simFeatures', commands: SIM_PREDICT, shown: "the engine's own (llamacpp: 4)",
    help: "llama.cpp slots (llama-server --parallel); other engines' batch limit" }),
  flag({ name: 'ctx-size', arg: 'n', group: 'simFeatures', commands: SIM_PREDICT, shown: "the model's context, not split",
    help: "llama.cpp's total context (llama-server -c), split over the slots" }),
  flag({ name: 'kv-cache-dtype', arg: 't', section: 'target', group: 'simulator', commands: SIM_PREDICT, shown: KV_CACHE_DTYPE_HELP.shown, help: KV_CACHE_DTYPE_HELP.text }),
  flag({ name: 'catalog', arg: 'file...', group: 'simulator', commands: SIM_PREDICT,
    help: 'add models/hardware from JSON (catalog format or a Hugging Face config.json)' }),

  flag({ name: 'label', arg: 'text', section: 'outputs', group: 'metadata', commands: PREDICT, help: 'free label stored with the run' }),
  flag({ name: 'out', arg: 'dir', section: 'outputs', group: 'outputs', commands: PREDICT, help: 'also write a run folder with the predicted records' }),
  flag({ name: 'calibrate-from', arg: 'run', group: 'calibration', commands: PREDICT,
    help: 'fit the simulator to measured runs (folders or ids, comma-separated), print the error before and after; narrows the intervals' }),
  flag({ name: 'calibration', arg: 'file', group: 'calibration', commands: PREDICT, help: 'use constants saved by --save-calibration (also for --check and --seed-file)' }),
  flag({ name: 'interval-level', arg: 'pct', group: 'calibration', commands: ['predict', 'plan'], shown: '80',
    help: 'prediction intervals on every predicted figure and capacity at this level, percent, from held-out residuals (0: none)' }),
  flag({ name: 'save-calibration', arg: 'file', group: 'calibration', commands: PREDICT, help: 'write the constants --calibrate-from fitted (JSON)' }),
  flag({ name: 'validate-on', arg: 'run', group: 'calibration', commands: PREDICT, repeatable: true,
    help: 'error of the prediction on another measured run, before and after calibration (repeatable)' }),
  flag({ name: 'seed-file', arg: 'file', group: 'calibration', commands: PREDICT, help: 'print predicted vs published for every figure of a seed table file' }),
  flag({ name: 'check', arg: 'file', group: 'calibration', commands: PREDICT,
    help: 'print predicted vs published for every figure of a table file (data/public-tables JSON, or a seed file)' }),

  flag({ name: 'max-num-seqs', arg: 'n', group: 'simulator', commands: SIM, shown: "the engine's own", help: "the engine's batch limit" }),
  flag({ name: 'model-time-scale', arg: 'x', group: 'simulator', commands: SIM, shown: '1',
    help: 'multiply all model time (1.3 = 30% slower; 0 = infinitely fast); also --time-scale' }),
  // Its old name, kept working: `inferbench sim --time-scale 1.3` is in scripts and docs.
  flag({ name: 'time-scale', arg: 'x', group: 'simulator', commands: SIM, hidden: true, help: 'old name of --model-time-scale' }),
  flag({ name: 'reasoning-tokens', arg: 'dist', group: 'simFeatures', commands: SIM,
    help: "reasoning tokens before each answer, in the engine's reasoning field (512, uniform:100,800, …)" }),
  flag({ name: 'spec-decode', arg: 'k:accept', group: 'simFeatures', commands: SIM_PREDICT, help: SPEC_DECODE }),
  flag({ name: 'no-prefix-caching', group: 'simFeatures', commands: SIM, help: 'turn off the prefix cache (on in vllm and sglang, as in the real engines)' }),
  flag({ name: 'enable-prompt-tokens-details', group: 'simFeatures', commands: SIM, help: 'usage reports prompt_tokens_details.cached_tokens (OpenAI routes)' }),
  flag({ name: 'replicas', arg: 'n', group: 'replicas', commands: SIM_PREDICT, shown: '1',
    help: 'serve N engines behind one port, each with its own KV and prefix cache (the router names its pick in x-sim-replica)' }),
  flag({ name: 'router', arg: 'policy', group: 'replicas', commands: SIM_PREDICT, shown: 'round-robin', choices: ['round-robin', 'least-load', 'prefix-aware'],
    help: 'with --replicas: round-robin | least-load (fewest in flight) | prefix-aware (longest cached prefix, else least load)' }),
  flag({ name: 'pd', arg: 'P:D', group: 'replicas', commands: SIM_PREDICT,
    help: 'prefill/decode disaggregation: P prefill and D decode engines behind one port, the KV moved over the GPU link (not with --replicas)' }),
  flag({ name: 'host', arg: 'addr', group: 'server', commands: SIM, value: '127.0.0.1', help: 'loopback address to bind' }),
  flag({ name: 'port', arg: 'n', group: 'server', commands: SIM, value: '8000', help: 'port (0 = any free port)' }),
  flag({ name: 'faults', arg: 'spec', group: 'faults', commands: SIM,
    help: 'inject faults, e.g. 429:0.05,reset:0.02 (kinds: 429, 500, 503, reset, stall, malformed, truncate, slow-first-byte; docs/simulator.md)' }),
  flag({ name: 'seed', arg: 'n', group: 'faults', commands: SIM, value: '1', help: 'seed for faults, natural lengths and noise' }),
];
